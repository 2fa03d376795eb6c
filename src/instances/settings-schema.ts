import { z } from 'zod';

/** The seven behaviour settings as a client may send them: all optional, unknown keys refused. */
export const settingsSchema = z.strictObject({
  autoRejectCalls: z.boolean().optional(),
  callRejectMessage: z.string().max(4096).optional(),
  ignoreGroupMessages: z.boolean().optional(),
  keepOnlineStatus: z.boolean().optional(),
  autoReadMessages: z.boolean().optional(),
  disableHistorySync: z.boolean().optional(),
  ignoreStatus: z.boolean().optional(),
});

export type SettingsPatch = z.infer<typeof settingsSchema>;
