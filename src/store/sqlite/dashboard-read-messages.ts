/**
 * What the SQLite store's dashboard reader (dashboard-reader.ts) and its worker thread (dashboard-read-worker.ts) send
 * each other. In a file of their own: the reader starts the worker by its URL and never imports it.
 */

export interface DashboardReadWorkerData {
  filename: string;
  readGate: string | undefined;
}

export interface DashboardReadRequest {
  id: number;
  repository: 'roster' | 'studyDays';
  method: string;
  args: unknown[];
}

export type DashboardReadResponse =
  | { id: number; result: unknown }
  | { id: number; error: { message: string; code: string | undefined } };
