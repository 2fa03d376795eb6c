/** What a node says about itself in its heartbeat. */
export interface NodeInfo {
  nodeId: string;
  /** Where the node's HTTP listener answers (for operators). */
  url: string;
  startedAt: string;
  /** Actors this node owned at its last heartbeat. */
  actors: number;
  heartbeatAt: string;
}

/**
 * Which nodes are alive. A node heartbeats about every second and is gone after about three seconds of
 * silence (or at once when it announces that it leaves).
 */
export interface Membership {
  start(): Promise<void>;
  /** Announces departure and stops heartbeating. */
  stop(): Promise<void>;
  /** The live nodes as of the last refresh, sorted by id (this node included while it runs). */
  liveNodes(): NodeInfo[];
  /** Reads the live nodes from the coordination store now. */
  refresh(): Promise<NodeInfo[]>;
  /** Called whenever the set of live node ids changes. */
  onChange(listener: (nodes: NodeInfo[]) => void): void;
}

/** Embedded mode: the only node is this one. */
export class LocalMembership implements Membership {
  readonly #startedAt = new Date().toISOString();

  constructor(
    private readonly nodeId: string,
    private readonly url: () => string,
    private readonly actors: () => number,
  ) {}

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  liveNodes(): NodeInfo[] {
    const now = new Date().toISOString();
    return [
      { nodeId: this.nodeId, url: this.url(), startedAt: this.#startedAt, actors: this.actors(), heartbeatAt: now },
    ];
  }

  async refresh(): Promise<NodeInfo[]> {
    return this.liveNodes();
  }

  onChange(): void {}
}
