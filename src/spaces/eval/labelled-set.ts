import { chunkBlocks } from '../chunk-blocks.ts';
import { extractText } from '../extract-document.ts';
import type { ChunkDraft } from '../space-document.ts';
import type { DocumentInput } from '../space-types.ts';
import { LABELLED_DOMAINS } from './labelled-domains.ts';
import type { DomainTemplate, FactTemplate, NameSource, SubjectNames } from './labelled-domains.ts';
import { seededRandom } from './seeded-random.ts';
import type { SeededRandom } from './seeded-random.ts';

/**
 * The labelled set for knowledge-space retrieval: generated in the repo from a seed (no download,
 * the same text on every machine), documents in markdown with headings and sections, and queries
 * whose supporting passage is known by a unique answer span.
 *
 * Fairness. Every document has siblings in its family that share nearly all their wording and
 * every attribute (different values), so retrieval must match the subject AND the fact; filler
 * sentences repeat the attribute vocabulary. Query kinds (QUERY_MIX) cover the cases where each
 * retriever is expected to win: `keyword` and `question` share the passage's own rare terms
 * (BM25's ground); `variant` (HX40 for HX-40, Velmoran, fishmarket, set-back, plurals) and `typo`
 * (one edit in a word of 5+ letters) break exact tokens, which character n-grams of the dense
 * embedder still match; `paraphrase` swaps the fact's words for synonyms, which neither lexical
 * retriever understands (it measures the floor, and is kept, not tuned away). Which kind a fact
 * gets is drawn at random, not chosen per result.
 */

export const QUERY_KINDS = ['keyword', 'question', 'paraphrase', 'variant', 'typo'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

/** Each kind's share of the queries. */
export const QUERY_MIX: Readonly<Record<QueryKind, number>> = { keyword: 0.25, question: 0.25, paraphrase: 0.2, variant: 0.15, typo: 0.15 };

export interface LabelledFact {
  key: string;
  section: string;
  value: string;
  sentence: string;
  span: string;
}

export interface LabelledDocument {
  /** Stable within a set: `<domain>/<subject short name>`. */
  key: string;
  domain: string;
  family: string;
  subject: SubjectNames;
  title: string;
  markdown: string;
  facts: LabelledFact[];
  input: DocumentInput;
}

export interface LabelledQuery {
  id: string;
  kind: QueryKind;
  text: string;
  documentKey: string;
  /** The section that holds the answer: [document title, section heading]. */
  headingPath: string[];
  /** A substring of exactly one document of the set (and of at least one of its chunks). */
  answerSpan: string;
  /** Positions of the target document's chunks that contain the whole span. */
  supportingChunks: number[];
  domain: string;
  fact: string;
}

/**
 * A document that is added, then replaced by a revision (every fact's value changed, the prose
 * kept) or deleted. `oldSpans` are the answer spans of its first version: after the change, no
 * search may return a passage containing one of them. `queries` aim at the old facts.
 */
export interface StaleCase {
  change: 'replaced' | 'deleted';
  before: LabelledDocument;
  after: LabelledDocument | null;
  oldSpans: string[];
  /** Keyword and question forms for each old fact. */
  queries: { text: string; fact: string }[];
}

export interface LabelledSet {
  seed: number | string;
  documents: LabelledDocument[];
  queries: LabelledQuery[];
  stale: StaleCase[];
  /** Every name the set used, so bulk documents made for the same space can avoid them. */
  names: string[];
}

export interface LabelledSetOptions {
  seed?: number | string;
  /** Families per domain (six domains). Default 2. */
  familiesPerDomain?: number;
  /** Labelled documents per family; one more per family becomes a stale case. Default 4. */
  subjectsPerFamily?: number;
}

const ONSETS = ['b', 'br', 'c', 'd', 'dr', 'f', 'g', 'gr', 'h', 'k', 'kr', 'l', 'm', 'n', 'p', 'r', 's', 'st', 't', 'tr', 'v', 'w', 'z', 'th', 'sh', 'qu'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ei', 'ou', 'ai', 'y'];
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'th', 'nd', 'rk', 'sk', 'm', 'v', 'lt'];

/**
 * Pseudo-word names. No name is a prefix of another (case-insensitively), so an answer span that
 * ends in a name ("… from the centre of Velmo") can never sit inside another document's text
 * ("… from the centre of Velmora").
 */
export function createNameSource(r: SeededRandom): NameSource {
  const claimedNames = new Set<string>();
  const prefixes = new Set<string>();
  const claim = (name: string): boolean => {
    const lower = name.toLowerCase();
    if (prefixes.has(lower)) return false;
    for (let i = 1; i <= lower.length; i++) if (claimedNames.has(lower.slice(0, i))) return false;
    claimedNames.add(lower);
    for (let i = 1; i <= lower.length; i++) prefixes.add(lower.slice(0, i));
    return true;
  };
  return {
    claim,
    word(syllables = 2) {
      for (let attempt = 0; attempt < 10_000; attempt++) {
        let word = '';
        for (let i = 0; i < syllables; i++) word += r.pick(ONSETS) + r.pick(VOWELS) + r.pick(CODAS);
        if (word.length < 5) word += r.pick(['a', 'o', 'en', 'ar']);
        const name = word[0]!.toUpperCase() + word.slice(1);
        if (claim(name)) return name;
      }
      throw new Error('name space exhausted');
    },
  };
}

function fill(template: string, subject: SubjectNames, value = ''): string {
  return template
    .replaceAll('{S}', subject.full)
    .replaceAll('{s}', subject.short)
    .replaceAll('{v}', subject.variant)
    .replaceAll('{F}', subject.family)
    .replaceAll('{V}', value);
}

/** A document's shape without values: which sentences go where, so a revision keeps the prose. */
interface DocumentPlan {
  domain: DomainTemplate;
  subject: SubjectNames;
  intro: string[];
  sections: { heading: string; lead: string[]; facts: FactTemplate[]; asList: boolean; tail: string[] }[];
}

function planDocument(r: SeededRandom, domain: DomainTemplate, subject: SubjectNames): DocumentPlan {
  const intro = r.shuffle(domain.intro).slice(0, r.int(2, domain.intro.length));
  const sections = domain.sections.map((section) => {
    const facts = r.shuffle(domain.facts.filter((fact) => fact.section === section.heading));
    const filler = r.shuffle(section.filler).slice(0, r.int(2, Math.min(4, section.filler.length)));
    const split = r.int(0, filler.length);
    return { heading: section.heading, lead: filler.slice(0, split), facts, asList: facts.length >= 2 && r.chance(0.3), tail: filler.slice(split) };
  });
  return { domain, subject, intro, sections };
}

function drawValues(r: SeededRandom, plan: DocumentPlan, names: NameSource, avoid?: ReadonlyMap<string, string>): Map<string, string> {
  const values = new Map<string, string>();
  for (const fact of plan.domain.facts) {
    let value = fact.value(r, names);
    for (let attempt = 0; attempt < 100 && avoid?.get(fact.key) === value; attempt++) value = fact.value(r, names);
    if (avoid?.get(fact.key) === value) throw new Error(`no new value for ${fact.key}`);
    values.set(fact.key, value);
  }
  return values;
}

function renderDocument(plan: DocumentPlan, values: ReadonlyMap<string, string>): LabelledDocument {
  const { domain, subject } = plan;
  const title = fill(domain.title, subject);
  const facts: LabelledFact[] = [];
  const parts: string[] = [`# ${title}`, plan.intro.map((s) => fill(s, subject)).join(' ')];
  for (const section of plan.sections) {
    parts.push(`## ${section.heading}`);
    const sentences = section.facts.map((fact) => {
      const value = values.get(fact.key)!;
      const sentence = fill(fact.sentence, subject, value);
      const span = fill(fact.span, subject, value);
      if (!sentence.includes(span)) throw new Error(`span of ${domain.name}/${fact.key} is not in its sentence`);
      facts.push({ key: fact.key, section: section.heading, value, sentence, span });
      return sentence;
    });
    const lead = section.lead.map((s) => fill(s, subject));
    const tail = section.tail.map((s) => fill(s, subject));
    if (section.asList) {
      if (lead.length > 0) parts.push(lead.join(' '));
      parts.push(sentences.map((s) => `- ${s}`).join('\n'));
      if (tail.length > 0) parts.push(tail.join(' '));
    } else {
      const body = [...lead, ...sentences, ...tail];
      // Long sections read as two paragraphs, as people write them.
      const cut = body.length >= 5 ? Math.ceil(body.length / 2) : body.length;
      parts.push(body.slice(0, cut).join(' '));
      if (cut < body.length) parts.push(body.slice(cut).join(' '));
    }
  }
  const markdown = `${parts.join('\n\n')}\n`;
  const { text, chunks } = chunkMarkdown(markdown);
  return {
    key: `${domain.name}/${subject.short}`,
    domain: domain.name,
    family: subject.family,
    subject,
    title,
    markdown,
    facts,
    input: {
      title,
      source: `eval/${domain.name}/${subject.short}.md`,
      format: 'markdown',
      metadata: { domain: domain.name, family: subject.family },
      text,
      chunks,
    },
  };
}

/**
 * A markdown document the way the upload path makes it: extraction to blocks, then the
 * structure-aware chunker, so the evaluation measures the chunks users get. `text` is the
 * extracted text (the blocks, a blank line apart), what DocumentInput.text holds.
 */
export function chunkMarkdown(markdown: string): { title: string | null; text: string; chunks: ChunkDraft[] } {
  const extracted = extractText(markdown, 'markdown');
  const chunks = chunkBlocks(extracted.blocks).map(({ text, position, page, headingPath }): ChunkDraft => ({ text, position, page, headingPath }));
  return { title: extracted.title ?? null, text: extracted.blocks.map((block) => block.text).join('\n\n'), chunks };
}

/** One typing slip in a word of five or more letters: two letters swapped, one dropped or one doubled. */
export function addTypo(r: SeededRandom, text: string): string {
  const words = [...text.matchAll(/[A-Za-z]{5,}/g)];
  if (words.length === 0) return text;
  const match = r.pick(words);
  const word = match[0];
  const at = r.int(1, word.length - 3);
  let changed: string;
  const op = r.int(0, 2);
  if (op === 0 && word[at] !== word[at + 1]) changed = word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2);
  else if (op === 2) changed = word.slice(0, at + 1) + word[at] + word.slice(at + 1);
  else changed = word.slice(0, at) + word.slice(at + 1);
  return text.slice(0, match.index) + changed + text.slice(match.index + word.length);
}

function queryText(r: SeededRandom, kind: QueryKind, fact: FactTemplate, subject: SubjectNames): string {
  switch (kind) {
    case 'keyword': return fill(fact.keyword, subject);
    case 'question': return fill(fact.question, subject);
    case 'paraphrase': return fill(fact.paraphrase, subject);
    case 'variant': return fill(fact.variant, subject);
    case 'typo': return addTypo(r, fill(r.chance(0.5) ? fact.keyword : fact.question, subject));
  }
}

/** Kinds for `count` queries in QUERY_MIX's shares (largest remainder), in random order. */
function drawKinds(r: SeededRandom, count: number): QueryKind[] {
  const exact = QUERY_KINDS.map((kind) => ({ kind, share: QUERY_MIX[kind] * count }));
  const counts = exact.map((e) => ({ kind: e.kind, n: Math.floor(e.share), rest: e.share - Math.floor(e.share) }));
  let missing = count - counts.reduce((sum, c) => sum + c.n, 0);
  for (const c of counts.slice().sort((a, b) => b.rest - a.rest)) {
    if (missing-- <= 0) break;
    c.n++;
  }
  return r.shuffle(counts.flatMap((c) => Array.from({ length: c.n }, () => c.kind)));
}

export function generateLabelledSet(options: LabelledSetOptions = {}): LabelledSet {
  const seed = options.seed ?? 1;
  const familiesPerDomain = options.familiesPerDomain ?? 2;
  const subjectsPerFamily = options.subjectsPerFamily ?? 4;
  const r = seededRandom(seed);
  const names = createNameSource(r);
  const usedNames: string[] = [];
  const recording: NameSource = {
    claim: (name) => names.claim(name) && (usedNames.push(name), true),
    word: (syllables) => {
      const word = names.word(syllables);
      usedNames.push(word);
      return word;
    },
  };

  const documents: LabelledDocument[] = [];
  const stale: StaleCase[] = [];
  for (const domain of LABELLED_DOMAINS) {
    for (let f = 0; f < familiesPerDomain; f++) {
      const subjects = domain.family(r, recording, subjectsPerFamily + 1);
      for (const subject of subjects.slice(0, subjectsPerFamily)) {
        const plan = planDocument(r, domain, subject);
        documents.push(renderDocument(plan, drawValues(r, plan, recording)));
      }
      const plan = planDocument(r, domain, subjects[subjectsPerFamily]!);
      const oldValues = drawValues(r, plan, recording);
      const before = renderDocument(plan, oldValues);
      const change = stale.length % 2 === 0 ? 'replaced' : 'deleted';
      const after = change === 'replaced' ? renderDocument(plan, drawValues(r, plan, recording, oldValues)) : null;
      const queries = domain.facts.flatMap((fact) => [
        { text: fill(fact.keyword, plan.subject), fact: fact.key },
        { text: fill(fact.question, plan.subject), fact: fact.key },
      ]);
      stale.push({ change, before, after, oldSpans: before.facts.map((fact) => fact.span), queries });
    }
  }

  const facts = documents.flatMap((doc) => doc.facts.map((fact) => ({ doc, fact })));
  const kinds = drawKinds(r, facts.length);
  const queries = facts.map(({ doc, fact }, i): LabelledQuery => {
    const kind = kinds[i]!;
    const template = LABELLED_DOMAINS.find((d) => d.name === doc.domain)!.facts.find((t) => t.key === fact.key)!;
    return {
      id: `q${String(i + 1).padStart(4, '0')}`,
      kind,
      text: queryText(r, kind, template, doc.subject),
      documentKey: doc.key,
      headingPath: [doc.title, fact.section],
      answerSpan: fact.span,
      supportingChunks: doc.input.chunks.filter((chunk) => chunk.text.includes(fact.span)).map((chunk) => chunk.position),
      domain: doc.domain,
      fact: fact.key,
    };
  });

  const set: LabelledSet = { seed, documents, queries, stale, names: usedNames };
  verifyLabelledSet(set);
  return set;
}

/**
 * The properties the metrics rely on; a generator change that breaks one fails loudly here
 * instead of skewing the figures: each answer span is in exactly one document (of all versions
 * ever added) and in a chunk of it, and no old span of a stale case survives anywhere.
 */
export function verifyLabelledSet(set: LabelledSet): void {
  const allTexts = [
    ...set.documents.map((doc) => ({ key: doc.key, text: doc.markdown })),
    ...set.stale.flatMap((c) => [{ key: `${c.before.key}#before`, text: c.before.markdown }, ...(c.after ? [{ key: `${c.after.key}#after`, text: c.after.markdown }] : [])]),
  ];
  const keys = new Set<string>();
  for (const doc of set.documents) {
    if (keys.has(doc.key)) throw new Error(`duplicate document key ${doc.key}`);
    keys.add(doc.key);
  }
  for (const query of set.queries) {
    const holders = allTexts.filter((t) => t.text.includes(query.answerSpan)).map((t) => t.key);
    if (holders.length !== 1 || holders[0] !== query.documentKey) {
      throw new Error(`answer span of ${query.id} is in ${holders.length} documents: ${JSON.stringify(query.answerSpan)}`);
    }
    if (query.supportingChunks.length === 0) throw new Error(`answer span of ${query.id} is in no single chunk`);
  }
  for (const c of set.stale) {
    for (const span of c.oldSpans) {
      const holders = allTexts.filter((t) => t.text.includes(span)).map((t) => t.key);
      if (holders.length !== 1 || holders[0] !== `${c.before.key}#before`) throw new Error(`old span ${JSON.stringify(span)} is in ${holders.join(', ')}`);
    }
  }
}

export interface BulkDocumentsOptions {
  seed?: number | string;
  /** Names already used in the space (LabelledSet.names), never reused by bulk documents. */
  reserved?: readonly string[];
  /** Subjects per family. Default 4. */
  familySize?: number;
}

/**
 * An endless stream of documents in the same domains and style as the labelled set, for scale:
 * filling a space to 100,000 chunks. Nothing is labelled; the names avoid the labelled set's, and
 * every answer span contains its subject's name, so a labelled span cannot turn up in them.
 */
export function* generateBulkDocuments(options: BulkDocumentsOptions = {}): Generator<LabelledDocument> {
  const r = seededRandom(`bulk:${options.seed ?? 1}`);
  const names = createNameSource(r);
  for (const name of options.reserved ?? []) names.claim(name);
  const familySize = options.familySize ?? 4;
  for (let round = 0; ; round++) {
    const domain = LABELLED_DOMAINS[round % LABELLED_DOMAINS.length]!;
    for (const subject of domain.family(r, names, familySize)) {
      const plan = planDocument(r, domain, subject);
      yield renderDocument(plan, drawValues(r, plan, names));
    }
  }
}
