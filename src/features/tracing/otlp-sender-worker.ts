// The OTLP sender's thread (otlp-sender.ts): it posts each request body it is handed to the
// collector (otlp-http.ts) and answers with what the collector said. The HTTP client runs here, not
// on the service's thread, so that node:http's and its streams' code, which the service's requests
// run through, never sees a client's objects: shared, that code would be recompiled for both.
import { parentPort, workerData } from 'node:worker_threads';
import { otlpSender, type OtlpTarget } from './otlp-http.js';

export interface SendRequest {
  readonly id: number;
  readonly body: Uint8Array;
}

const sender = otlpSender(workerData as OtlpTarget);
const port = parentPort;
port?.on('message', ({ id, body }: SendRequest) => {
  void sender.send(body).then((answer) => port.postMessage({ id, answer }));
});
