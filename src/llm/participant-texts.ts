/**
 * Participant-facing texts of the LLM layer, in one place (the per-language catalogues will take them over).
 */

/** The one message a participant gets per model outage (`LLM_OUTAGE_NOTICE` overrides it; '' turns it off). */
export const DEFAULT_LLM_OUTAGE_NOTICE = "I'm having trouble replying right now. I'll get back to you soon.";
