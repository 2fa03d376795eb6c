/** What the chatbot and helpdesk endpoints answer (503) when their module is off on this server (spec 7). */
export const MODULE_UNAVAILABLE = 'integration gateway not configured';
