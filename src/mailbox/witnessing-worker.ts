/**
 * @module
 * The entry of the witness submitter's thread (witnessing.ts starts it): runs the rounds
 * (witness-rounds.ts) and speaks the small protocol of `WitnessThreadMessage`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isWitnessError } from '../core/errors.js';
import { WitnessRounds, type WitnessingOptions } from './witness-rounds.js';
import type { WitnessThreadReply, WitnessThreadRequest, WitnessThreadSetup } from './witnessing.js';

const port = parentPort;
if (!port) throw new Error('witnessing-worker.ts runs only as a worker thread (witnessing.ts starts it).');
const reply = (message: WitnessThreadReply) => port.postMessage(message);

const { dir, options } = workerData as WitnessThreadSetup;
let rounds: WitnessRounds | undefined;
try {
  rounds = await WitnessRounds.start(dir, {
    ...options,
    log: (line) => reply({ type: 'log', line }),
  } satisfies WitnessingOptions);
  reply({ type: 'ready', origin: rounds.origin });
} catch (error) {
  const message = (error as Error).message;
  reply(isWitnessError(error) ? { type: 'failed', code: error.code, message } : { type: 'failed', message });
}

port.on('message', (request: WitnessThreadRequest) => {
  if (!rounds) return;
  if (request.type === 'round') rounds.round();
  else if (request.type === 'close')
    void rounds.close().then(
      () => reply({ type: 'closed' }),
      (error: unknown) => reply({ type: 'closed', error: (error as Error).message }),
    );
});
