/** The machine a bench run ran on, recorded in every result file: figures mean nothing without it. */
import { availableParallelism, cpus, freemem, loadavg, release, totalmem } from 'node:os';

export interface Machine {
  /** Cores this process may use (`os.availableParallelism()`). */
  readonly cores: number;
  readonly logicalCpus: number;
  readonly cpuModel: string;
  readonly cpuMHz: number;
  readonly memoryBytes: number;
  readonly freeMemoryBytesAtStart: number;
  /** 1-minute load average as the run started: on a shared machine, read every figure beside it. */
  readonly loadAverageAtStart: number;
  readonly node: string;
  readonly v8: string;
  readonly platform: string;
  readonly arch: string;
  readonly kernel: string;
}

export function describeMachine(): Machine {
  const cpu = cpus();
  return {
    cores: availableParallelism(),
    logicalCpus: cpu.length,
    cpuModel: cpu[0]?.model.trim() ?? 'unknown',
    cpuMHz: cpu[0]?.speed ?? 0,
    memoryBytes: totalmem(),
    freeMemoryBytesAtStart: freemem(),
    loadAverageAtStart: loadavg()[0]!,
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    kernel: release(),
  };
}
