/** What an automatic rule answers about one simulated conversation, and the settings the rules read. */
export type RuleStatus = 'pass' | 'fail' | 'not-applicable';

export interface RuleResult {
  rule: string;
  status: RuleStatus;
  detail: string;
}

export interface RuleSettings {
  /** The intake must reach FEEDBACK within this many persona messages. */
  intakeTurnLimit: number;
  /** `SCHEDULER_PREP_TIME_MINUTES`: how long before the target time the daily prompt is sent. */
  prepTimeMinutes: number;
}
