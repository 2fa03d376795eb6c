/** A label of a (Business) account. */
export interface LabelInfo {
  id: string;
  name: string;
}

export interface ChatLabels {
  chatJid: string;
  labels: { id: string; name: string }[];
}

/** Labels of a Business account, as the session keeps them from the network's label events. */
export interface LabelOps {
  /** Chats and their labels as the network reports them (a full resync when `refresh`). */
  chats(refresh: boolean): Promise<ChatLabels[]>;
  /** Every label of the account, including those on no chat. */
  list(): Promise<LabelInfo[]>;
  /** Adds or removes labels on a chat; returns the chat's labels after. @throws NotFoundError for an unknown label */
  assign(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels>;
  /** Creates a label (`color`: WhatsApp's palette index, 0 to 19) under the next free numeric id. */
  create(name: string, color: number): Promise<LabelInfo>;
  /** Deletes a label; it leaves every chat. @throws NotFoundError for an unknown label */
  remove(labelId: string): Promise<void>;
}

/** The next free label id: WhatsApp's ids are small integers as strings. */
export function nextLabelId(labels: LabelInfo[]): string {
  return String(labels.reduce((max, l) => Math.max(max, Number(l.id) || 0), 0) + 1);
}
