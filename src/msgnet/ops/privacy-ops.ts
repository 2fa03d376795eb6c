export type PrivacyField = 'lastSeen' | 'online' | 'profile' | 'status' | 'readReceipts' | 'callAdd' | 'groupAdd';
export type PrivacySettings = Record<PrivacyField, string>;

/** The linked number's privacy settings. */
export interface PrivacyOps {
  get(): Promise<PrivacySettings>;
  set(field: PrivacyField, value: string): Promise<void>;
}
