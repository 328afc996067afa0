import cliProgress from 'cli-progress';
import type { PullEvent } from '../models/model-pull.ts';
import { formatSize, printable } from './model-view.ts';

/**
 * Draws `svc models pull` progress on stderr: a bar with bytes, rate and ETA on a terminal
 * (cli-progress), and on anything else (a CI log, a pipe) one plain line every few seconds.
 */
export interface ProgressOptions {
  stream: NodeJS.WriteStream;
  tty: boolean;
  /** Between plain lines (default 5 s). */
  intervalMs?: number;
}

/** Bytes per second over the last few seconds, so a stall shows at once and a burst fades. */
class Rate {
  readonly #samples: { t: number; bytes: number }[] = [];

  add(bytes: number, t = performance.now()): void {
    this.#samples.push({ t, bytes });
    while (this.#samples.length > 2 && t - this.#samples[0]!.t > 5000) this.#samples.shift();
  }

  reset(): void {
    this.#samples.length = 0;
  }

  get perSecond(): number | undefined {
    const first = this.#samples[0];
    const last = this.#samples.at(-1);
    if (first === undefined || last === undefined || last.t - first.t < 250) return undefined;
    return ((last.bytes - first.bytes) * 1000) / (last.t - first.t);
  }
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class PullProgress {
  readonly #stream: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #intervalMs: number;
  readonly #rate = new Rate();
  #bar: cliProgress.SingleBar | undefined;
  #lastLine = 0;
  #checkingShown = false;

  constructor(options: ProgressOptions) {
    this.#stream = options.stream;
    this.#tty = options.tty;
    this.#intervalMs = options.intervalMs ?? 5000;
  }

  #line(text: string): void {
    this.#stopBar();
    this.#stream.write(`${printable(text)}\n`);
  }

  #stopBar(): void {
    this.#bar?.stop();
    this.#bar = undefined;
  }

  // Payload names avoid cli-progress's own tokens ({eta}, {value}, {total}), which would win.
  #stats(bytes: number, total: number | undefined): { done: string; size: string; rate: string; left: string; percent: string } {
    const rate = this.#rate.perSecond;
    const left = total === undefined ? undefined : total - bytes;
    return {
      done: formatSize(bytes),
      size: total === undefined ? '?' : formatSize(total),
      rate: rate === undefined ? '-' : `${formatSize(Math.round(rate))}/s`,
      left: rate === undefined || rate <= 0 || left === undefined ? '?' : formatDuration(left / rate),
      percent: total === undefined || total === 0 ? '?' : `${Math.floor((bytes / total) * 100)}%`,
    };
  }

  onEvent = (event: PullEvent): void => {
    switch (event.type) {
      case 'resolved': {
        const sizes = event.files.map((f) => f.size);
        const total = sizes.every((s) => s !== undefined) ? ` (${formatSize(sizes.reduce((a, b) => a + b, 0))})` : '';
        const parts = event.files.length > 1 ? `, ${event.files.length} parts` : '';
        this.#line(`pulling ${event.id} from ${event.source}${parts}${total}`);
        return;
      }
      case 'file-present':
        this.#line(`${event.file.name}: already downloaded (${event.file.dest})`);
        return;
      case 'file-start':
        this.#rate.reset();
        this.#checkingShown = false;
        this.#lastLine = 0;
        return;
      case 'file-done': {
        const { result } = event;
        const check = result.verified ? 'sha256 verified' : `sha256 ${result.sha256} (the source publishes no checksum)`;
        const resumed = result.resumedFrom > 0 ? `, resumed at ${formatSize(result.resumedFrom)}` : '';
        this.#line(`${event.file.name}: ${formatSize(result.bytes)}, ${check}${resumed}`);
        return;
      }
      case 'download':
        break;
    }
    const { progress, file } = event;
    switch (progress.phase) {
      case 'checking':
        if (!this.#checkingShown) this.#line(`${file.name}: checking the ${formatSize(progress.total)} downloaded before`);
        this.#checkingShown = true;
        return;
      case 'retrying':
        this.#rate.reset();
        this.#line(`${file.name}: ${progress.reason}; retrying in ${formatDuration(progress.delayMs / 1000)} (attempt ${progress.attempt})`);
        return;
      case 'restarting':
        this.#rate.reset();
        this.#line(`${file.name}: ${progress.reason}; starting over`);
        return;
      case 'verifying':
        this.#stopBar();
        return;
      case 'downloading':
        break;
    }
    this.#rate.add(progress.bytes);
    const stats = this.#stats(progress.bytes, progress.total);
    if (this.#tty && progress.total !== undefined) {
      if (this.#bar === undefined) {
        this.#bar = new cliProgress.SingleBar({
          stream: this.#stream,
          format: `${printable(file.name)} |{bar}| {percentage}% | {done} / {size} | {rate} | ETA {left}`,
          barsize: 30,
          hideCursor: true,
          clearOnComplete: false,
        }, cliProgress.Presets.shades_classic);
        this.#bar.start(progress.total, progress.bytes, stats);
      } else {
        this.#bar.update(progress.bytes, stats);
      }
      return;
    }
    // Plain lines: one every interval (the file-done line closes a download, however short).
    const now = performance.now();
    if (this.#lastLine === 0) this.#lastLine = now;
    if (now - this.#lastLine < this.#intervalMs) return;
    this.#lastLine = now;
    this.#stream.write(`${printable(file.name)}: ${stats.done} / ${stats.size} (${stats.percent}), ${stats.rate}, ETA ${stats.left}\n`);
  };

  close(): void {
    this.#stopBar();
  }
}
