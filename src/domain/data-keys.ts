/**
 * The keys of a participant's `state_data` map (specification §Data keys). Every value is a string; structured values
 * are JSON. An empty or missing value means "not set".
 */
export const DataKey = {
  conversationHistory: 'conversationHistory',
  systemPrompt: 'systemPrompt',
  participantBackground: 'participantBackground',
  userProfile: 'userProfile',
  lastHabitPrompt: 'lastHabitPrompt',
  feedbackState: 'feedbackState',
  feedbackTimerID: 'feedbackTimerID',
  feedbackFollowupTimerID: 'feedbackFollowupTimerID',
  scheduleRegistry: 'scheduleRegistry',
  conversationState: 'conversationState',
  stateTransitionTimerID: 'stateTransitionTimerID',
  lastPromptSentAt: 'lastPromptSentAt',
  autoFeedbackTimerID: 'autoFeedbackTimerID',
  dailyPromptPending: 'dailyPromptPending',
  dailyPromptReminderTimerID: 'dailyPromptReminderTimerID',
  dailyPromptReminderSentAt: 'dailyPromptReminderSentAt',
  dailyPromptRespondedAt: 'dailyPromptRespondedAt',
  lastIntensityPromptDate: 'lastIntensityPromptDate',
  // Keys PromptPipe adds beyond the original 18 (engagement guard, scheduling issue).
  unansweredProactiveCount: 'unansweredProactiveCount',
  engagementState: 'engagementState',
  /** JSON `{id, question, options, sentAt}` of the last poll sent, to resolve poll answers (and numbered replies). */
  lastPoll: 'lastPoll',
} as const;
export type DataKey = (typeof DataKey)[keyof typeof DataKey];

/** The 18 keys of the behavioural contract, in its order. */
export const CONTRACT_DATA_KEYS: readonly DataKey[] = [
  DataKey.conversationHistory,
  DataKey.systemPrompt,
  DataKey.participantBackground,
  DataKey.userProfile,
  DataKey.lastHabitPrompt,
  DataKey.feedbackState,
  DataKey.feedbackTimerID,
  DataKey.feedbackFollowupTimerID,
  DataKey.scheduleRegistry,
  DataKey.conversationState,
  DataKey.stateTransitionTimerID,
  DataKey.lastPromptSentAt,
  DataKey.autoFeedbackTimerID,
  DataKey.dailyPromptPending,
  DataKey.dailyPromptReminderTimerID,
  DataKey.dailyPromptReminderSentAt,
  DataKey.dailyPromptRespondedAt,
  DataKey.lastIntensityPromptDate,
];

export type StateData = Partial<Record<DataKey, string>>;
