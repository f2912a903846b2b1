/** What Twilio would send in `X-Twilio-Signature` (the tests and the fake provider sign with the official package). */
import twilio from 'twilio';

export function signTwilioRequest(authToken: string, url: string, params: Record<string, string>): string {
  return twilio.getExpectedTwilioSignature(authToken, url, params);
}
