/** The channel's name (`PROMPTPIPE_CHANNEL=whatsapp-web`) and the one session it links. */
export const WHATSAPP_WEB_CHANNEL = 'whatsapp-web';
export const DEFAULT_WHATSAPP_SESSION = 'default';
