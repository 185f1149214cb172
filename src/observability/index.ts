export {
  currentLogContext,
  runInLogContext,
  runWithLogContext,
  updateLogContext,
  type LogContext,
} from './log-context';
export { createMetrics, type Metrics, type MetricsSources, type ObservedQueue } from './metrics';
export {
  instrumentModelCalls,
  instrumentSummaryStore,
  instrumentTurnStore,
  withModelCallContext,
  type Lifecycle,
} from './instrument-ports';
export { observeSocketServer } from './observe-sockets';
export { observeWorker } from './observe-workers';
export { startMetricsServer } from './start-metrics-server';
export { TurnTimer } from './turn-timer';
export { ObservedTurnRunner } from './observed-turn-runner';
