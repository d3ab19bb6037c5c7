/**
 * What one pass over the chain file measures: blocks, wall time, stage totals, and memory at its start, middle and
 * end — the whole RSS and its anonymous part (heap, buffers; from /proc/self/status on Linux). The rest of the RSS is
 * file-backed: mostly the LMDB map of the store being written, which grows with the data stored, not with what the
 * process holds.
 */
import { readFileSync } from 'node:fs';
import { emptyStageTotals, type StageTotals } from './stage-clock.js';

export interface MemorySample {
  rssMiB: number;
  anonymousMiB: number;
}

export interface IngestRun {
  blocks: number;
  seconds: number;
  /** CPU time of the whole process over the pass (every thread: main, pool workers, LMDB, the collector), user + system. */
  cpuSeconds: number;
  totals: StageTotals;
  memory: { start: MemorySample; middle: MemorySample; end: MemorySample };
}

function anonymousMiB(): number {
  try {
    const match = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function sample(): MemorySample {
  return { rssMiB: process.memoryUsage.rss() / 2 ** 20, anonymousMiB: anonymousMiB() };
}

const NOT_SAMPLED: MemorySample = { rssMiB: NaN, anonymousMiB: NaN };

export class RunMeter {
  readonly totals = emptyStageTotals();
  private readonly started = performance.now();
  private readonly cpuStarted = process.cpuUsage();
  private readonly start = sample();
  private middle = NOT_SAMPLED;
  private blocks = 0;

  /** `middleBlock` is the block count at which the middle sample is taken. */
  constructor(private readonly middleBlock: number) {}

  committed(count: number): void {
    const before = this.blocks;
    this.blocks += count;
    if (before < this.middleBlock && this.blocks >= this.middleBlock) this.middle = sample();
  }

  finish(): IngestRun {
    return {
      blocks: this.blocks,
      seconds: (performance.now() - this.started) / 1000,
      cpuSeconds: ((cpu) => (cpu.user + cpu.system) / 1e6)(process.cpuUsage(this.cpuStarted)),
      totals: this.totals,
      memory: { start: this.start, middle: this.middle, end: sample() },
    };
  }
}
