// Long because it is a data table: the six document templates (sections, filler prose, facts and
// their query forms) the labelled set is generated from; the code in it is a few lines a template.
import type { SeededRandom } from './seeded-random.ts';

/**
 * The subjects the labelled set writes about: six kinds of documents people keep (product
 * manuals, city guides, lab protocols, employee handbooks, recipes, software guides), each a
 * template of sections, filler prose and facts. Every subject belongs to a family (a brand's
 * models, a region's towns, a lab's protocols, a group's companies, a valley's dishes, a suite's
 * tools) whose documents share nearly all their wording, so a query has to pin down both the
 * subject and the fact: those siblings are the distractors.
 *
 * Placeholders in templates: {S} the subject's full name, {s} its short name, {v} a spelling a
 * user might type instead (HX40 for HX-40, Velmoran for Velmora), {F} the family, {V} the value.
 * A fact's `span` (the answer span) is a substring of its sentence that holds the value and the
 * subject's name, so it is unique to one document and names the fact unambiguously.
 */

export interface SubjectNames {
  full: string;
  short: string;
  variant: string;
  family: string;
}

/** Pseudo-words for names, never repeated within one generator. */
export interface NameSource {
  /** A capitalized pseudo-word of `syllables` syllables, not handed out before. */
  word(syllables?: number): string;
  /** Reserves a name so it is never handed out (or accepted by `claim`) again; false if taken. */
  claim(name: string): boolean;
}

export interface FactTemplate {
  key: string;
  section: string;
  value: (r: SeededRandom, names: NameSource) => string;
  sentence: string;
  span: string;
  /** Query forms: the passage's own content words; a natural question; other words for the fact; a spelling variant. */
  keyword: string;
  question: string;
  paraphrase: string;
  variant: string;
}

export interface SectionTemplate {
  heading: string;
  filler: readonly string[];
}

export interface DomainTemplate {
  name: string;
  /** The subjects of one family of `size`, names claimed from `names`. */
  family(r: SeededRandom, names: NameSource, size: number): SubjectNames[];
  title: string;
  intro: readonly string[];
  sections: readonly SectionTemplate[];
  facts: readonly FactTemplate[];
}

const WEEKDAYS = ['Mondays', 'Tuesdays', 'Wednesdays', 'Thursdays', 'Fridays'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function letters(r: SeededRandom, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String.fromCharCode(65 + r.int(0, 25));
  return out;
}

function demonym(city: string): string {
  return /[aeiou]$/.test(city) ? `${city}n` : `${city}er`;
}

const productManual: DomainTemplate = {
  name: 'product-manual',
  family(r, names, size) {
    const brand = names.word();
    const noun = r.pick(['circulation pump', 'booster pump', 'heating pump', 'transfer pump']);
    let series = '';
    const numbers = r.shuffle(Array.from({ length: 18 }, (_, i) => 15 + i * 5));
    // The series letters are claimed with every model number, so no two families share a short name.
    // Two letters while they last (676 series), then three: bulk documents need thousands of families.
    for (let attempt = 0; attempt < 1000 && series === ''; attempt++) {
      const candidate = letters(r, attempt < 100 ? 2 : 3);
      if (numbers.slice(0, size).every((n) => names.claim(`${candidate}-${n}`))) series = candidate;
    }
    if (series === '') throw new Error('name space exhausted');
    return numbers.slice(0, size).map((n) => ({
      full: `${brand} ${series}-${n} ${noun}`, short: `${series}-${n}`, variant: `${series}${n}`, family: brand,
    }));
  },
  title: '{S}: installation and operating manual',
  intro: [
    'This manual covers the {S} from installation to disposal.',
    'Every {F} unit leaves the factory pressure-tested, with its serial number printed on the motor housing.',
    'Read it completely before installing the {s}, and keep it near the unit.',
    'The {s} uses a wet-rotor design, so the motor is cooled and lubricated by the pumped water.',
  ],
  sections: [
    {
      heading: 'Technical data',
      filler: [
        'The {S} is built for domestic heating circuits and small commercial installations.',
        'Its housing is cast iron with a cataphoresis coating against corrosion.',
        'The rating plate on the side of the {s} lists the supply voltage and the protection class.',
        'All figures apply to clean water at 20 °C; glycol mixtures reduce the flow.',
      ],
    },
    {
      heading: 'Installation',
      filler: [
        'Install the {s} with the motor shaft horizontal; a vertical shaft shortens the bearing life.',
        'Flush the pipework before connecting the pump, since welding beads and sand damage the rotor.',
        'Fit isolation valves on both sides so the {s} can be removed without draining the circuit.',
        'Only a qualified electrician may connect the {S} to the mains supply.',
        'Arrows cast into the housing show the direction of flow.',
      ],
    },
    {
      heading: 'Operation',
      filler: [
        'The control knob on the front selects one of three fixed speeds or the automatic mode.',
        'In automatic mode the {s} adjusts its speed to the demand of the thermostatic valves.',
        'A green light shows normal operation; a flashing red light shows a fault.',
        'Do not run the {s} dry, not even for a short test.',
        'Noise in the pipes after filling usually means air is still trapped in the circuit.',
      ],
    },
    {
      heading: 'Maintenance',
      filler: [
        'Switch off the power and wait for the motor to cool before opening the terminal box.',
        'The {s} needs no lubrication during its service life.',
        'Check the pipe joints for leaks once a year.',
        'Use only original {F} spare parts; other parts void the warranty.',
        'Limescale in hard-water areas can block the rotor after a long standstill.',
      ],
    },
    {
      heading: 'Troubleshooting',
      filler: [
        'Most faults are shown by a code on the display and a flashing red light.',
        'If the {s} does not start, check the fuse and the supply voltage first.',
        'A blocked rotor can often be freed by turning the unlocking screw with a flat screwdriver.',
        'Write down the fault code before you call the {F} service line.',
      ],
    },
    {
      heading: 'Warranty',
      filler: [
        'The warranty does not cover damage from frost, dirt in the circuit or wrong installation.',
        'Keep the receipt; the serial number alone does not prove the date of purchase.',
        'Claims are handled by the dealer who sold the {s}.',
      ],
    },
  ],
  facts: [
    {
      key: 'rated-pressure', section: 'Technical data',
      value: (r) => `${(r.int(25, 99) / 10).toFixed(1)} bar`,
      sentence: 'The {s} is rated for a maximum operating pressure of {V}.',
      span: '{s} is rated for a maximum operating pressure of {V}',
      keyword: '{s} maximum operating pressure',
      question: 'What is the maximum operating pressure of the {S}?',
      paraphrase: 'how much pressure can the {s} withstand',
      variant: '{v} max operating pressures',
    },
    {
      key: 'flow-rate', section: 'Technical data',
      value: (r) => `${r.int(18, 95)} litres per minute`,
      sentence: 'At full speed the {s} delivers up to {V}.',
      span: 'the {s} delivers up to {V}',
      keyword: '{s} flow rate litres per minute',
      question: 'What flow rate does the {S} deliver at full speed?',
      paraphrase: 'how much water can the {s} move each minute',
      variant: '{v} flowrate',
    },
    {
      key: 'power-draw', section: 'Technical data',
      value: (r) => `${r.int(3, 9)} and ${r.int(35, 140)} watts`,
      sentence: 'Depending on the selected speed, the {s} draws between {V}.',
      span: 'the {s} draws between {V}',
      keyword: '{s} power consumption watts',
      question: 'How much power does the {S} draw?',
      paraphrase: 'what is the electricity usage of the {s}',
      variant: '{v} power-draw',
    },
    {
      key: 'clearance', section: 'Installation',
      value: (r) => `${r.int(15, 60)} cm`,
      sentence: 'Leave a clearance of at least {V} around the {s} for ventilation and service access.',
      span: 'clearance of at least {V} around the {s}',
      keyword: '{s} installation clearance',
      question: 'How much clearance does the {S} need around it?',
      paraphrase: 'how much free space should be left around the {s} when mounting it',
      variant: '{v} clearances when installing',
    },
    {
      key: 'fuse', section: 'Installation',
      value: (r) => `${r.pick([6, 10, 13, 16, 20])} A ${r.pick(['slow-blow', 'type C', 'type B'])} fuse`,
      sentence: 'The supply circuit of the {s} must be protected by a {V}.',
      span: '{s} must be protected by a {V}',
      keyword: '{s} fuse rating',
      question: "What fuse should protect the {S}'s supply circuit?",
      paraphrase: 'which circuit breaker does the {s} need',
      variant: '{v} fuses',
    },
    {
      key: 'night-setback', section: 'Operation',
      value: (r) => `${r.int(12, 90)} minutes`,
      sentence: 'When the flow temperature drops, the {s} switches to night setback after {V} of reduced demand.',
      span: 'the {s} switches to night setback after {V}',
      keyword: '{s} night setback',
      question: 'When does the {S} switch to night setback?',
      paraphrase: 'after how long does the {s} go into its low-power night setting',
      variant: '{v} night set-back delay',
    },
    {
      key: 'max-water-temperature', section: 'Operation',
      value: (r) => `${r.int(70, 110)} °C`,
      sentence: 'The {s} handles water temperatures from 2 °C up to {V}.',
      span: '{s} handles water temperatures from 2 °C up to {V}',
      keyword: '{s} maximum water temperature',
      question: 'What is the highest water temperature the {S} can handle?',
      paraphrase: 'how hot can the fluid in the {s} get',
      variant: '{v} max temp of water',
    },
    {
      key: 'seal-interval', section: 'Maintenance',
      value: (r) => `${(r.int(12, 60) * 100).toLocaleString('en-US')} operating hours`,
      sentence: 'Replace the shaft seal of the {s} every {V}.',
      span: 'shaft seal of the {s} every {V}',
      keyword: '{s} shaft seal replacement interval',
      question: 'How often should the shaft seal of the {S} be replaced?',
      paraphrase: 'when is a new gasket due on the {s}',
      variant: '{v} replacing shaft seals',
    },
    {
      key: 'strainer', section: 'Maintenance',
      value: (r) => `${r.int(2, 12)} weeks`,
      sentence: 'Clean the strainer in front of the {s} every {V}, or sooner if the flow drops.',
      span: 'strainer in front of the {s} every {V}',
      keyword: '{s} strainer cleaning',
      question: 'How often must the strainer of the {S} be cleaned?',
      paraphrase: 'how frequently should I clear the {s} inlet filter',
      variant: '{v} strainers clean',
    },
    {
      key: 'thermal-code', section: 'Troubleshooting',
      value: (r) => `E-${r.int(100, 999)}`,
      sentence: 'Fault code {V} on the {s} means the thermal cutout has tripped; let the motor cool for an hour.',
      span: 'code {V} on the {s}',
      keyword: '{s} thermal cutout fault code',
      question: 'Which fault code does the {S} show when the thermal cutout trips?',
      paraphrase: 'what error appears when the {s} overheats',
      variant: '{v} thermal cut-out error',
    },
    {
      key: 'dry-run-code', section: 'Troubleshooting',
      value: (r) => `E-${r.int(100, 999)}`,
      sentence: 'Code {V} means the {s} detected dry running and stopped itself.',
      span: '{V} means the {s} detected dry running',
      keyword: '{s} dry running code',
      question: 'What code does the {S} display after detecting dry running?',
      paraphrase: 'the {s} stopped because there is no water, which error number is shown',
      variant: '{v} dry-run error',
    },
    {
      key: 'warranty', section: 'Warranty',
      value: (r) => `${r.pick([24, 30, 36, 48, 60])} months`,
      sentence: '{F} guarantees the {s} for {V} from the date of purchase.',
      span: 'guarantees the {s} for {V}',
      keyword: '{s} warranty period',
      question: 'How long is the warranty on the {S}?',
      paraphrase: 'for how many months is the {s} guaranteed',
      variant: '{v} guarantee duration',
    },
  ],
};

const cityGuide: DomainTemplate = {
  name: 'city-guide',
  family(_r, names, size) {
    const region = names.word();
    return Array.from({ length: size }, () => {
      const city = names.word();
      return { full: city, short: city, variant: demonym(city), family: region };
    });
  },
  title: "{S}: a visitor's guide",
  intro: [
    '{S} lies on the {F} coast, a short train ride from the regional capital.',
    'The old town is compact and best explored on foot.',
    'Locals are proud of the harbour, the markets and the long summer evenings.',
    'Spring and early autumn are the quietest seasons for a visit.',
  ],
  sections: [
    {
      heading: 'At a glance',
      filler: [
        '{S} grew rich on the herring trade and later on shipbuilding.',
        'Today most people work at the university, the port or the hospital.',
        'The town is part of the {F} heritage route.',
      ],
    },
    {
      heading: 'Getting there and around',
      filler: [
        'Regional trains from the capital stop at {S} Central every hour.',
        'Parking in the old town is limited to residents.',
        'Ferries connect {S} with the islands of the {F} archipelago in summer.',
        'Bicycles can be hired at the station and returned at any docking point.',
      ],
    },
    {
      heading: 'Sights',
      filler: [
        'The cathedral square is the heart of the old town.',
        'Several churches hold free organ concerts on summer evenings.',
        'The view from the castle hill is worth the climb.',
        'Many museums in {S} offer reduced tickets for students.',
      ],
    },
    {
      heading: 'Food and markets',
      filler: [
        'Smoked fish and rye bread are the classic lunch.',
        'Many cafés close early on Sundays.',
        'Street food stalls gather near the harbour on weekends.',
      ],
    },
    {
      heading: 'Events',
      filler: [
        'Hotels fill up quickly during festival weeks.',
        'Most events are free and take place outdoors.',
        'The tourist office on the market square publishes a monthly programme.',
      ],
    },
  ],
  facts: [
    {
      key: 'population', section: 'At a glance',
      value: (r) => `${r.int(18, 480)},${r.int(100, 999)}`,
      sentence: 'With {V} inhabitants, {S} is the largest town on this stretch of the coast.',
      span: 'With {V} inhabitants, {S}',
      keyword: '{S} population inhabitants',
      question: 'How many people live in {S}?',
      paraphrase: 'what is the number of residents of {S}',
      variant: '{v} populations',
    },
    {
      key: 'airport-distance', section: 'Getting there and around',
      value: (r) => `${r.int(8, 60)} km`,
      sentence: 'The {F} regional airport is {V} from the centre of {S}.',
      span: '{V} from the centre of {S}',
      keyword: '{S} airport distance km',
      question: 'How far is the airport from the centre of {S}?',
      paraphrase: 'distance between the airfield and downtown {S}',
      variant: '{v} airport distances',
    },
    {
      key: 'day-ticket', section: 'Getting there and around',
      value: (r) => `${r.int(3, 9)}.${r.pick(['20', '40', '50', '80', '90'])} crowns`,
      sentence: 'A day ticket for the {S} trams costs {V} and is sold at every stop.',
      span: '{S} trams costs {V}',
      keyword: '{S} tram day ticket price',
      question: 'How much does a day ticket for the trams in {S} cost?',
      paraphrase: 'what is the fare for unlimited tram rides for one day in {S}',
      variant: '{v} tramway day-ticket',
    },
    {
      key: 'harbour-tram', section: 'Getting there and around',
      value: (r) => `every ${r.int(5, 20)} minutes`,
      sentence: 'The harbour tram in {S} runs {V} until midnight.',
      span: 'harbour tram in {S} runs {V}',
      keyword: '{S} harbour tram frequency',
      question: 'How often does the harbour tram run in {S}?',
      paraphrase: 'how long do I wait for the tram by the port in {S}',
      variant: '{v} harbor tram',
    },
    {
      key: 'bell-tower', section: 'Sights',
      value: (r) => `${r.int(38, 112)} metres`,
      sentence: 'The bell tower of {S} cathedral rises {V} above the square.',
      span: '{S} cathedral rises {V}',
      keyword: '{S} cathedral bell tower height',
      question: 'How tall is the bell tower of the cathedral in {S}?',
      paraphrase: 'what is the height of the church steeple in {S}',
      variant: '{v} cathedral belltower',
    },
    {
      key: 'town-walls', section: 'Sights',
      value: (r) => `${r.int(1180, 1590)}`,
      sentence: 'The town walls of {S} were completed in {V} after decades of work.',
      span: 'walls of {S} were completed in {V}',
      keyword: '{S} town walls completed year',
      question: 'When were the town walls of {S} completed?',
      paraphrase: 'in what year did {S} finish building its city fortifications',
      variant: '{v} townwall completion',
    },
    {
      key: 'museum-closed', section: 'Sights',
      value: (r) => r.pick(WEEKDAYS),
      sentence: 'The maritime museum of {S} is closed on {V}.',
      span: 'maritime museum of {S} is closed on {V}',
      keyword: '{S} maritime museum closed day',
      question: 'On which day is the maritime museum in {S} closed?',
      paraphrase: "when can't I visit the seafaring museum in {S}",
      variant: '{v} maritime museums closing day',
    },
    {
      key: 'fish-market', section: 'Food and markets',
      value: (r) => `${r.int(4, 7)}:${r.pick(['00', '15', '30', '45'])} in the morning`,
      sentence: 'The fish market on the {S} quay opens at {V}, and the best catch is gone by eight.',
      span: '{S} quay opens at {V}',
      keyword: '{S} fish market opening time',
      question: 'What time does the fish market in {S} open?',
      paraphrase: 'how early can I buy fresh seafood at the {S} harbour',
      variant: '{v} fishmarket opens',
    },
    {
      key: 'local-dish', section: 'Food and markets',
      value: (r, names) => `${names.word()} ${r.pick(['dumplings', 'pie', 'soup', 'pancakes', 'buns'])}`,
      sentence: 'The dish every visitor to {S} should try is {V}, served with lingonberries.',
      span: '{S} should try is {V}',
      keyword: '{S} signature dish',
      question: 'What dish should visitors to {S} try?',
      paraphrase: 'what is the local speciality food in {S}',
      variant: '{v} speciality dishes',
    },
    {
      key: 'lantern-festival', section: 'Events',
      value: (r) => r.pick(MONTHS),
      sentence: 'The lantern festival of {S} takes place every year in {V}.',
      span: 'lantern festival of {S} takes place every year in {V}',
      keyword: '{S} lantern festival month',
      question: 'When is the lantern festival held in {S}?',
      paraphrase: 'what time of year can I see the lantern celebrations in {S}',
      variant: '{v} lantern festivals',
    },
  ],
};

const labProtocol: DomainTemplate = {
  name: 'lab-protocol',
  family(r, names, size) {
    const lab = `${names.word()} Laboratory`;
    const procedure = r.pick(['Plasmid miniprep', 'Total RNA extraction', 'Protein lysate preparation', 'Genomic DNA isolation', 'Competent cell preparation']);
    let prefix = '';
    const numbers = r.shuffle(Array.from({ length: 900 }, (_, i) => 100 + i)).slice(0, size);
    for (let attempt = 0; attempt < 1000 && prefix === ''; attempt++) {
      const candidate = letters(r, attempt < 100 ? 2 : 3);
      if (numbers.every((n) => names.claim(`${candidate}-${n}`))) prefix = candidate;
    }
    if (prefix === '') throw new Error('name space exhausted');
    return numbers.map((n) => ({
      full: `${procedure} protocol ${prefix}-${n}`, short: `${prefix}-${n}`, variant: `${prefix}${n}`, family: lab,
    }));
  },
  title: '{S}',
  intro: [
    'This protocol is maintained by the {F} and reviewed every year.',
    'Read the safety section before starting.',
    'Deviations from protocol {s} are recorded in the lab notebook with the reason.',
  ],
  sections: [
    {
      heading: 'Materials',
      filler: [
        'All buffers are prepared with nuclease-free water.',
        'Label every tube with the date, the sample and your initials.',
        'Keep enzymes on ice at all times.',
        'Check the expiry dates of the kit components before you begin.',
      ],
    },
    {
      heading: 'Procedure',
      filler: [
        'Work on a clean bench and change gloves between samples.',
        'Invert the tubes gently; vortexing shears the DNA.',
        'Do not let the column dry out between washes.',
        'Pre-warm the heat block before you start.',
        'Process no more than twelve samples in one run.',
      ],
    },
    {
      heading: 'Results',
      filler: [
        'Measure the concentration on the spectrophotometer and record the 260/280 ratio.',
        'Low yields usually come from too many cells or incomplete lysis.',
        'Run a control sample with every batch.',
      ],
    },
    {
      heading: 'Safety and waste',
      filler: [
        'Wear a lab coat, gloves and safety glasses.',
        'Report every spill to the lab manager the same day.',
        'Phenol and chloroform are handled only in the fume hood.',
      ],
    },
  ],
  facts: [
    {
      key: 'buffer-volume', section: 'Materials',
      value: (r) => `${r.int(50, 500)} µL`,
      sentence: 'For protocol {s}, resuspend each pellet in {V} of resuspension buffer.',
      span: '{s}, resuspend each pellet in {V}',
      keyword: '{s} resuspension buffer volume',
      question: 'How much resuspension buffer is used per pellet in protocol {s}?',
      paraphrase: 'what amount of liquid do I add to dissolve the pellet for {s}',
      variant: '{v} resuspending pellet volume',
    },
    {
      key: 'reagent-shelf-life', section: 'Materials',
      value: (r) => `${r.int(2, 26)} weeks`,
      sentence: 'Once opened, the lysis reagent for {s} keeps for {V} at room temperature.',
      span: 'lysis reagent for {s} keeps for {V}',
      keyword: '{s} lysis reagent shelf life',
      question: 'How long does the opened lysis reagent for {s} keep?',
      paraphrase: 'when does the lysis solution for {s} expire after opening',
      variant: '{v} lysis reagents keep',
    },
    {
      key: 'incubation', section: 'Procedure',
      value: (r) => `${r.int(30, 42)} °C for ${r.int(5, 90)} minutes`,
      sentence: 'In protocol {s}, incubate the samples at {V} with gentle shaking.',
      span: '{s}, incubate the samples at {V}',
      keyword: '{s} incubation temperature time',
      question: 'At what temperature and for how long are samples incubated in {s}?',
      paraphrase: 'how warm and how long should the samples sit in the incubator for {s}',
      variant: '{v} incubating temp',
    },
    {
      key: 'centrifuge', section: 'Procedure',
      value: (r) => `${(r.int(4, 16) * 1000).toLocaleString('en-US')} g for ${r.int(2, 30)} minutes`,
      sentence: 'Centrifuge the lysate from step 4 of {s} at {V} at 4 °C.',
      span: 'step 4 of {s} at {V}',
      keyword: '{s} centrifuge lysate speed',
      question: 'How fast and how long is the lysate centrifuged in protocol {s}?',
      paraphrase: 'what spin settings does {s} use for the lysate',
      variant: '{v} centrifugation speed',
    },
    {
      key: 'column-wash', section: 'Procedure',
      value: (r) => `${r.pick(['twice', 'three times', 'four times'])} with ${r.int(200, 800)} µL`,
      sentence: 'Wash the column of {s} {V} of wash buffer.',
      span: 'column of {s} {V}',
      keyword: '{s} column wash buffer',
      question: 'How often is the column washed in {s}, and with how much buffer?',
      paraphrase: 'how many rinses of the spin column does {s} call for',
      variant: '{v} washing the column',
    },
    {
      key: 'expected-yield', section: 'Results',
      value: (r) => `${r.int(5, 60)} µg per ${r.pick(['millilitre of culture', 'million cells', '100 mg of tissue'])}`,
      sentence: 'A good run of {s} yields about {V}.',
      span: 'run of {s} yields about {V}',
      keyword: '{s} expected yield',
      question: 'What yield should a good run of protocol {s} give?',
      paraphrase: 'how much product do I get from {s} normally',
      variant: '{v} yields expected',
    },
    {
      key: 'storage', section: 'Results',
      value: (r) => `${r.pick(['−20 °C', '−80 °C', '4 °C'])} for up to ${r.int(2, 24)} months`,
      sentence: 'Store the product of {s} at {V}.',
      span: 'product of {s} at {V}',
      keyword: '{s} storage temperature',
      question: 'How should the product of {s} be stored, and for how long?',
      paraphrase: 'where do I keep the finished samples from {s} and how long do they last',
      variant: '{v} storing temp',
    },
    {
      key: 'liquid-waste', section: 'Safety and waste',
      value: (r) => `the ${r.pick(['yellow', 'red', 'blue', 'grey', 'orange', 'white'])} ${r.pick(['bin', 'drum', 'canister'])} marked W-${r.int(10, 99)}`,
      sentence: 'Liquid waste from {s} goes into {V} under the fume hood.',
      span: 'waste from {s} goes into {V}',
      keyword: '{s} liquid waste disposal',
      question: 'Where does liquid waste from {s} go?',
      paraphrase: 'how do I get rid of the leftover fluids from {s}',
      variant: '{v} disposing liquid wastes',
    },
  ],
};

const employeeHandbook: DomainTemplate = {
  name: 'employee-handbook',
  family(r, names, size) {
    const group = `${names.word()} Group`;
    const trades = r.shuffle(['Logistics', 'Freight', 'Analytics', 'Systems', 'Foods', 'Energy', 'Textiles', 'Media']);
    return Array.from({ length: size }, (_, i) => {
      const name = names.word();
      return { full: `${name} ${trades[i % trades.length]!}`, short: name, variant: `${name}s`, family: group };
    });
  },
  title: '{S} employee handbook: travel, expenses and remote work',
  intro: [
    'This handbook applies to every employee of {S}, a member of the {F}.',
    'Where local law gives more, local law applies.',
    'Questions go to the people team.',
  ],
  sections: [
    {
      heading: 'Remote work',
      filler: [
        'Remote work is agreed with the line manager and recorded in the HR system.',
        'Employees working from home follow the same security rules as in the office.',
        'Core hours are between ten and three.',
      ],
    },
    {
      heading: 'Business travel',
      filler: [
        'Business trips are booked through the travel desk.',
        'Train is preferred over flying for trips under five hours.',
        'Economy class is the rule for all flights.',
      ],
    },
    {
      heading: 'Expenses',
      filler: [
        'Expense claims are filed in the finance portal with a photo of each receipt.',
        'Alcohol is not reimbursed.',
        'Managers approve claims within a week.',
      ],
    },
    {
      heading: 'Equipment',
      filler: [
        'Laptops are encrypted and managed by IT.',
        'Lost devices are reported to the service desk at once.',
        'Private software may not be installed on company devices.',
      ],
    },
    {
      heading: 'Leave',
      filler: [
        'Leave is requested in the HR system at least two weeks ahead.',
        'Unused leave may be carried into the first quarter of the next year.',
        'Sick days are reported to the manager before nine.',
      ],
    },
  ],
  facts: [
    {
      key: 'remote-days', section: 'Remote work',
      value: (r) => `${r.pick(['one day', 'two days', 'three days', 'four days'])} per week`,
      sentence: '{s} employees may work remotely up to {V}, provided their team agrees.',
      span: '{s} employees may work remotely up to {V}',
      keyword: '{s} remote work days per week',
      question: 'How many days a week can {S} employees work remotely?',
      paraphrase: 'how often am I allowed to work from home at {s}',
      variant: '{v} remote-working days',
    },
    {
      key: 'home-office', section: 'Remote work',
      value: (r) => `${r.int(150, 900)} euros`,
      sentence: '{S} pays a one-time home office allowance of {V} for a desk and chair.',
      span: '{S} pays a one-time home office allowance of {V}',
      keyword: '{s} home office allowance',
      question: 'How large is the home office allowance at {S}?',
      paraphrase: 'how much money does {s} give for furniture to work from home',
      variant: '{v} homeoffice allowances',
    },
    {
      key: 'hotel-cap', section: 'Business travel',
      value: (r) => `${r.int(90, 260)} euros per night`,
      sentence: 'At {s}, hotel costs are reimbursed up to {V} in most cities.',
      span: '{s}, hotel costs are reimbursed up to {V}',
      keyword: '{s} hotel cost limit per night',
      question: 'Up to what amount are hotel costs reimbursed at {S}?',
      paraphrase: 'what is the maximum nightly accommodation budget at {s}',
      variant: '{v} hotel reimbursement',
    },
    {
      key: 'meal-allowance', section: 'Business travel',
      value: (r) => `${r.int(20, 75)} euros`,
      sentence: 'The daily meal allowance on {s} business trips is {V}.',
      span: 'allowance on {s} business trips is {V}',
      keyword: '{s} daily meal allowance',
      question: 'What is the daily meal allowance on business trips at {S}?',
      paraphrase: 'how much can I spend on food per day when travelling for {s}',
      variant: '{v} per-diem meals',
    },
    {
      key: 'mileage', section: 'Business travel',
      value: (r) => `${r.int(18, 45)} cents per kilometre`,
      sentence: 'Employees who use their own car for {s} business are paid {V}.',
      span: '{s} business are paid {V}',
      keyword: '{s} own car mileage per kilometre',
      question: 'What does {S} pay per kilometre for using your own car?',
      paraphrase: 'how is private vehicle use reimbursed at {s}',
      variant: '{v} milage own car',
    },
    {
      key: 'receipt-deadline', section: 'Expenses',
      value: (r) => `${r.int(10, 90)} days`,
      sentence: 'Receipts must reach {s} finance within {V} of the expense, or the claim lapses.',
      span: '{s} finance within {V}',
      keyword: '{s} receipts deadline finance',
      question: 'Within how many days must receipts reach finance at {S}?',
      paraphrase: 'how long do I have to hand in my expense slips at {s}',
      variant: '{v} submitting receipts deadline',
    },
    {
      key: 'laptop-cycle', section: 'Equipment',
      value: (r) => `${r.pick(['two', 'three', 'four', 'five'])} years`,
      sentence: '{S} replaces employee laptops every {V}, earlier if a repair costs more than half a new one.',
      span: '{S} replaces employee laptops every {V}',
      keyword: '{s} laptop replacement',
      question: 'How often does {S} replace employee laptops?',
      paraphrase: 'when do I get a new computer at {s}',
      variant: '{v} laptops replaced',
    },
    {
      key: 'phone-costs', section: 'Equipment',
      value: (r) => `${r.int(15, 80)} euros per month`,
      sentence: '{S} covers mobile phone costs up to {V}.',
      span: '{S} covers mobile phone costs up to {V}',
      keyword: '{s} mobile phone costs',
      question: 'How much of the mobile phone bill does {S} cover?',
      paraphrase: 'what is the monthly cell plan allowance at {s}',
      variant: '{v} mobile-phone cost',
    },
    {
      key: 'annual-leave', section: 'Leave',
      value: (r) => `${r.int(24, 32)} days`,
      sentence: 'Full-time staff at {s} receive {V} of paid annual leave.',
      span: 'staff at {s} receive {V}',
      keyword: '{s} paid annual leave days',
      question: 'How many days of paid annual leave do full-time staff get at {S}?',
      paraphrase: 'how much vacation time does {s} give',
      variant: '{v} annual-leave entitlement',
    },
    {
      key: 'parental-leave', section: 'Leave',
      value: (r) => `${r.int(6, 26)} weeks`,
      sentence: '{S} tops up statutory parental leave to full pay for {V}.',
      span: '{S} tops up statutory parental leave to full pay for {V}',
      keyword: '{s} parental leave full pay',
      question: 'For how many weeks does {S} pay full salary during parental leave?',
      paraphrase: 'how long is paid time off for new parents at {s}',
      variant: '{v} parental-leave pay',
    },
  ],
};

const DISHES = [
  'barley stew', 'apple tart', 'rye flatbread', 'fish chowder', 'lentil soup', 'honey cake',
  'mushroom pie', 'onion tart', 'plum dumplings', 'cabbage rolls', 'pork roast', 'carrot cake',
];

function pluralDish(dish: string): string {
  if (/s$/.test(dish)) return dish;
  if (/sh$|ch$/.test(dish)) return `${dish}es`;
  return `${dish}s`;
}

const recipe: DomainTemplate = {
  name: 'recipe',
  family(r, names, size) {
    const valley = `the ${names.word()} valley`;
    const dishes = r.shuffle(DISHES);
    return Array.from({ length: size }, (_, i) => {
      const name = names.word();
      const dish = dishes[i % dishes.length]!;
      const last = dish.split(' ').at(-1)!;
      return { full: `${name} ${dish}`, short: `${name} ${last}`, variant: `${name.toLowerCase()} ${pluralDish(dish)}`, family: valley };
    });
  },
  title: '{S}',
  intro: [
    'This recipe comes from the farm kitchens of {F} and feeds a family with leftovers.',
    'It is a dish for cold evenings.',
    'Read the whole recipe before you start; some steps need time.',
  ],
  sections: [
    {
      heading: 'Ingredients',
      filler: [
        'Use a firm, waxy potato if you add potatoes.',
        'Salt and pepper are added to taste at the end.',
        'Good butter makes a noticeable difference.',
        'Buy the flour fresh; old flour tastes of cardboard.',
      ],
    },
    {
      heading: 'Preparation',
      filler: [
        'Chop the onions finely so they melt into the sauce.',
        'Taste and adjust the seasoning before serving.',
        'Weigh everything before you start.',
      ],
    },
    {
      heading: 'Cooking',
      filler: [
        'Keep the lid on for the first half of the cooking time.',
        'Stir now and then so nothing sticks.',
        'A heavy cast-iron pot keeps the heat even.',
      ],
    },
    {
      heading: 'Storing and serving',
      filler: [
        'Cool leftovers quickly and cover them.',
        'Reheat gently with a splash of water.',
        'Serve with a green salad and a glass of cider.',
      ],
    },
  ],
  facts: [
    {
      key: 'spice', section: 'Ingredients',
      value: (r) => `${r.pick(['one', 'two', 'three', 'four'])} teaspoons of ${r.pick(['smoked paprika', 'ground caraway', 'dried marjoram', 'ground coriander', 'fennel seed', 'crushed juniper'])}`,
      sentence: 'The {S} gets {V}, which gives it its character.',
      span: '{S} gets {V}',
      keyword: '{S} spice teaspoons',
      question: 'How much spice goes into the {S}?',
      paraphrase: 'what seasoning, and how much, does the {s} use',
      variant: '{v} spices',
    },
    {
      key: 'servings', section: 'Ingredients',
      value: (r) => `${r.int(2, 12)} people`,
      sentence: 'This amount of {S} serves {V} as a main course.',
      span: '{S} serves {V}',
      keyword: '{S} servings people',
      question: 'How many people does the {S} serve?',
      paraphrase: 'for how many diners is the {s} recipe',
      variant: '{v} serves',
    },
    {
      key: 'soaking', section: 'Preparation',
      value: (r) => `${r.int(2, 14)} hours`,
      sentence: 'Soak the grains for the {s} for at least {V} in cold water.',
      span: 'grains for the {s} for at least {V}',
      keyword: '{s} soaking time grains',
      question: 'How long should the grains for the {S} be soaked?',
      paraphrase: 'how many hours do I leave the {s} grains in water beforehand',
      variant: '{v} soak duration',
    },
    {
      key: 'resting', section: 'Preparation',
      value: (r) => `${r.int(10, 90)} minutes`,
      sentence: 'Let the {s} rest for {V} before cutting or serving.',
      span: 'Let the {s} rest for {V}',
      keyword: '{s} resting time',
      question: 'How long must the {S} rest before serving?',
      paraphrase: 'how long should the {s} stand after cooking',
      variant: '{v} rests',
    },
    {
      key: 'oven-temperature', section: 'Cooking',
      value: (r) => `${r.int(14, 24) * 10} °C`,
      sentence: 'Bake the {s} in the oven at {V}, fan off.',
      span: 'Bake the {s} in the oven at {V}',
      keyword: '{s} oven temperature',
      question: 'At what oven temperature is the {S} baked?',
      paraphrase: 'how hot should the oven be for the {s}',
      variant: '{v} baking temp',
    },
    {
      key: 'cooking-time', section: 'Cooking',
      value: (r) => `${r.int(20, 180)} minutes`,
      sentence: 'The {s} needs {V} in total, until the top is deep brown.',
      span: '{s} needs {V} in total',
      keyword: '{s} total cooking time',
      question: 'How long does the {S} take to cook?',
      paraphrase: 'how many minutes should the {s} be in the oven',
      variant: '{v} cook-time',
    },
    {
      key: 'pan-size', section: 'Cooking',
      value: (r) => `a ${r.int(18, 32)} cm ${r.pick(['round tin', 'cast-iron pot', 'baking dish', 'springform pan'])}`,
      sentence: 'Use {V} for the {s}; a smaller one overflows.',
      span: 'Use {V} for the {s}',
      keyword: '{s} pan size',
      question: 'What size of pan does the {S} need?',
      paraphrase: 'which dish diameter is right for the {s}',
      variant: '{v} tin sizes',
    },
    {
      key: 'fridge', section: 'Storing and serving',
      value: (r) => `${r.int(2, 6)} days`,
      sentence: 'Covered, the {s} keeps in the fridge for {V}.',
      span: 'the {s} keeps in the fridge for {V}',
      keyword: '{s} fridge storage',
      question: 'How long does the {S} keep in the fridge?',
      paraphrase: 'how many days are {s} leftovers good for when refrigerated',
      variant: '{v} refrigerator storing',
    },
    {
      key: 'freezing', section: 'Storing and serving',
      value: (r) => `up to ${r.int(1, 6)} months`,
      sentence: 'The {s} can be frozen for {V}; thaw it overnight.',
      span: '{s} can be frozen for {V}',
      keyword: '{s} freezing',
      question: 'Can the {S} be frozen, and for how long?',
      paraphrase: 'how long will the {s} last in the freezer',
      variant: '{v} freezes',
    },
  ],
};

const softwareGuide: DomainTemplate = {
  name: 'software-guide',
  family(r, names, size) {
    const suite = `${names.word()} toolkit`;
    const suffixes = r.shuffle(['mesh', 'sync', 'proxy', 'ctl', 'vault', 'queue', 'watch', 'gate']);
    return Array.from({ length: size }, (_, i) => {
      const stem = names.word().toLowerCase();
      const suffix = suffixes[i % suffixes.length]!;
      return { full: `${stem}${suffix}`, short: `${stem}${suffix}`, variant: `${stem} ${suffix}`, family: suite };
    });
  },
  title: '{S} administration guide',
  intro: [
    '{S} is part of the {F} and runs as a single binary.',
    'This guide covers configuration, limits, logging and upgrades.',
    'Commands are shown for Linux; other systems differ only in paths.',
  ],
  sections: [
    {
      heading: 'Configuration',
      filler: [
        'Settings are read from the configuration file first and can be overridden by environment variables.',
        'Invalid settings stop {s} at startup with a message naming the key.',
        'Reload the configuration with SIGHUP; no restart is needed.',
      ],
    },
    {
      heading: 'Limits',
      filler: [
        'Limits protect {s} from clients that misbehave.',
        'Raise limits gradually and watch memory use.',
        'Every limit can be changed at runtime through the admin socket.',
      ],
    },
    {
      heading: 'Logging',
      filler: [
        'Logs are written as JSON lines to standard output.',
        'Set the log level to debug only while investigating.',
        'Each line carries a request id that also appears in error responses.',
      ],
    },
    {
      heading: 'Upgrades',
      filler: [
        'Back up the data directory before every upgrade.',
        'Read the release notes for breaking changes.',
        'Downgrades are not supported once the data format has been migrated.',
      ],
    },
  ],
  facts: [
    {
      key: 'default-port', section: 'Configuration',
      value: (r) => `${r.int(1025, 9999)}`,
      sentence: 'By default {s} listens on TCP port {V} on all interfaces.',
      span: '{s} listens on TCP port {V}',
      keyword: '{s} default TCP port',
      question: 'Which port does {S} listen on by default?',
      paraphrase: 'what network port number does {s} bind to out of the box',
      variant: '{v} listening port',
    },
    {
      key: 'config-path', section: 'Configuration',
      value: (r) => `/etc/${r.pick(['opt', 'local', 'srv'])}/${r.pick(['config', 'settings', 'main'])}.${r.pick(['toml', 'yaml', 'ini'])}`,
      sentence: 'The configuration file of {s} lives at {V} unless --config says otherwise.',
      span: '{s} lives at {V}',
      keyword: '{s} configuration file location',
      question: 'Where is the configuration file of {S}?',
      paraphrase: 'what path does {s} read its settings from',
      variant: '{v} config file path',
    },
    {
      key: 'token-variable', section: 'Configuration',
      value: (r, names) => `${names.word().toUpperCase()}_${r.pick(['TOKEN', 'API_KEY', 'SECRET'])}`,
      sentence: '{S} reads its access token from the {V} environment variable.',
      span: '{S} reads its access token from the {V}',
      keyword: '{s} access token environment variable',
      question: 'Which environment variable holds the access token for {S}?',
      paraphrase: 'how do I pass credentials to {s}',
      variant: '{v} env var token',
    },
    {
      key: 'max-connections', section: 'Limits',
      value: (r) => `${r.int(64, 4096)}`,
      sentence: '{S} accepts at most {V} concurrent connections; further clients wait in the backlog.',
      span: '{S} accepts at most {V} concurrent connections',
      keyword: '{s} maximum concurrent connections',
      question: 'How many concurrent connections does {S} accept?',
      paraphrase: 'what is the client limit for {s} at the same time',
      variant: '{v} max connection',
    },
    {
      key: 'idle-timeout', section: 'Limits',
      value: (r) => `${r.int(5, 300)} seconds`,
      sentence: 'Idle connections to {s} are closed after {V}.',
      span: 'Idle connections to {s} are closed after {V}',
      keyword: '{s} idle connections closed',
      question: 'When does {S} close idle connections?',
      paraphrase: 'how long can a quiet client stay connected to {s}',
      variant: '{v} idle timeouts',
    },
    {
      key: 'cache-ttl', section: 'Limits',
      value: (r) => `${r.int(30, 3600)} seconds`,
      sentence: 'Cached lookups in {s} expire after {V} (the cache.ttl_seconds key).',
      span: 'Cached lookups in {s} expire after {V}',
      keyword: '{s} cache.ttl_seconds',
      question: 'How long do cached lookups in {S} live?',
      paraphrase: 'when do stored results in {s} go stale',
      variant: '{v} cache ttl',
    },
    {
      key: 'log-rotation', section: 'Logging',
      value: (r) => `${r.int(10, 500)} MB`,
      sentence: 'When logging to a file, {s} rotates the log at {V} and keeps five old files.',
      span: '{s} rotates the log at {V}',
      keyword: '{s} log rotation size',
      question: 'At what size does {S} rotate its log file?',
      paraphrase: 'how big can the {s} log get before a new one starts',
      variant: '{v} logrotate size',
    },
    {
      key: 'upgrade-from', section: 'Upgrades',
      value: (r) => `${r.int(1, 4)}.${r.int(0, 19)}`,
      sentence: 'Upgrades to the current {s} release are supported from version {V} or later.',
      span: '{s} release are supported from version {V}',
      keyword: '{s} upgrade supported from version',
      question: 'From which version can {S} be upgraded directly?',
      paraphrase: 'what older release of {s} can jump straight to the newest',
      variant: '{v} upgrading from version',
    },
    {
      key: 'locked-exit', section: 'Upgrades',
      value: (r) => `${r.int(3, 120)}`,
      sentence: '{S} exits with status {V} when its data directory is locked by another process.',
      span: '{S} exits with status {V}',
      keyword: '{s} exit status data directory locked',
      question: 'What exit status does {S} return when the data directory is locked?',
      paraphrase: '{s} quits because another instance holds the data folder, what code does it return',
      variant: '{v} exit-code locked',
    },
  ],
};

export const LABELLED_DOMAINS: readonly DomainTemplate[] = [productManual, cityGuide, labProtocol, employeeHandbook, recipe, softwareGuide];
