import type { LinkChallenge, LinkRequest } from '../msgnet/msgnet-driver.js';
import type { ConnectionState } from '../store/records.js';
import type { ExtensionEnv, InstanceExtension } from './instance-extension.js';

/** What the connection calls do to the actor's session (session-lifecycle.ts). */
export interface SessionControl {
  /** A QR or pairing challenge, or the link resumed; answers once the events it caused are handled. */
  connect(request: LinkRequest): Promise<LinkChallenge>;
  /** Unlinks, forgets the profile last applied; answers the state after. */
  logout(): Promise<ConnectionState>;
  /** Closes the connection and opens it again with the saved link; answers the state after. */
  reconnect(): Promise<ConnectionState>;
  /** Re-reads the instance's settings and configuration from the store; false when it is gone. */
  applySettings(): Promise<boolean>;
}

/**
 * What a handler of an instance's calls receives with its payload, on the owner node: the actor's own
 * context and session, the instance as the actor last saw it, its events, and the owner check. Made once
 * per actor (messaging-behavior.ts); the handler tables are one per node.
 */
export interface ActorScope extends ExtensionEnv {
  /** @throws NotOwnerError once the actor stopped, or unless the lease is surely still ours. */
  assertOwner(): void;
  /** Names the client's label of a message about to be sent: its outgoing `message.exchange` carries it. */
  labelSource(messageId: string, source: string): void;
  /** Updates the push name the instance caches (`connection.profileName`), in order with network events. */
  setProfileName(name: string): Promise<void>;
  readonly connection: SessionControl;
  /** The actor's own instance of the extension made by the node's `extensions[index]`. */
  extension(index: number): InstanceExtension;
}
