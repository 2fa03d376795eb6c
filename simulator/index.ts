export { Simulator, startSimulator } from './simulator.js';
export type { NodeEnv, SimulatorOptions } from './simulator.js';
export type { ReceivedRecord, DecryptFailure } from './phone/phone-records.js';
export type { StanzaEvent, StanzaEventKind } from './server/stanza-log.js';
export { FAULT_KINDS } from './server/faults.js';
/** How long the simulated network lets a call ring before it is over. */
export { RINGING_MS as CALL_RINGING_MS } from './server/message-relay.js';
export type { FaultKind } from './server/faults.js';
export { mintCertAuthority } from './wire/cert-chain.js';
export type { CertAuthority } from './wire/cert-chain.js';
