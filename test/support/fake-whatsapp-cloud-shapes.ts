/**
 * The request shapes the fake Cloud API accepts, from Meta's reference for `POST /{phone-number-id}/messages`: only
 * the fields Meta documents for each message type (an unknown one is refused, as Meta answers `(#100) Param … is not
 * a valid parameter`), and a template exactly as approved: its name and language registered, as many body
 * parameters as its body has variables, each without a newline, a tab or more than four consecutive spaces (132018),
 * and a payload for each of its quick-reply buttons, by index.
 */

type Json = Record<string, unknown>;

/** An approved template of the fake account. */
export interface FakeTemplate {
  name: string;
  language: string;
  /** How many `{{n}}` variables the body has. */
  bodyVariables: number;
  /** Its quick-reply buttons' labels (fixed at approval), in order; none for a plain template. */
  quickReplies?: string[];
}

/** A refusal as Meta words it: HTTP status, error code, message. */
export interface ShapeProblem {
  status: number;
  code: number;
  message: string;
}

const invalid = (message: string): ShapeProblem => ({ status: 400, code: 100, message: `(#100) ${message}` });

function unknownKey(object: Json, allowed: readonly string[], where: string): ShapeProblem | undefined {
  const extra = Object.keys(object).find((key) => !allowed.includes(key));
  return extra === undefined ? undefined : invalid(`Param ${where}${extra} is not a valid parameter`);
}

const asObject = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

/** Meta's rule for template parameters (error 132018). */
export function badParameterText(text: string): boolean {
  return /[\n\r\t]/.test(text) || / {5,}/.test(text);
}

function textProblem(text: Json | undefined): ShapeProblem | undefined {
  if (!text) return invalid('text is required for type text');
  const extra = unknownKey(text, ['body', 'preview_url'], 'text[');
  if (extra) return extra;
  if (typeof text.body !== 'string' || text.body === '') return invalid('text[body] is required');
  return text.body.length > 4096 ? invalid('text[body] is longer than 4096 characters') : undefined;
}

function interactiveProblem(interactive: Json | undefined): ShapeProblem | undefined {
  if (!interactive) return invalid('interactive is required for type interactive');
  const extra = unknownKey(interactive, ['type', 'header', 'body', 'footer', 'action'], 'interactive[');
  if (extra) return extra;
  const bodyText = asObject(interactive.body)?.text;
  if (typeof bodyText !== 'string' || bodyText === '') return invalid('interactive[body][text] is required');
  const action = asObject(interactive.action);
  if (interactive.type === 'button') {
    const buttons = action?.buttons;
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return invalid('1 to 3 buttons');
    for (const button of buttons as Json[]) {
      const reply = asObject(button.reply);
      if (button.type !== 'reply' || typeof reply?.id !== 'string' || typeof reply.title !== 'string') {
        return invalid('each button is {type: reply, reply: {id, title}}');
      }
      if (reply.title.length > 20) return invalid('button titles are at most 20 characters');
    }
    return undefined;
  }
  if (interactive.type === 'list') {
    if (typeof action?.button !== 'string') return invalid('action[button] is required');
    const sections = action.sections;
    const rows = Array.isArray(sections)
      ? (sections as Json[]).flatMap((section) => (section.rows as Json[]) ?? [])
      : [];
    if (rows.length < 1 || rows.length > 10) return invalid('1 to 10 rows');
    for (const row of rows) {
      if (typeof row.id !== 'string' || typeof row.title !== 'string' || row.title.length > 24) {
        return invalid('each row has an id and a title of at most 24 characters');
      }
    }
    return undefined;
  }
  return invalid('interactive[type] must be button or list');
}

function templateProblem(template: Json | undefined, registered: readonly FakeTemplate[]): ShapeProblem | undefined {
  if (!template) return invalid('template is required for type template');
  const extra = unknownKey(template, ['name', 'language', 'components'], 'template[');
  if (extra) return extra;
  const code = asObject(template.language)?.code;
  if (typeof template.name !== 'string' || typeof code !== 'string') {
    return invalid('template[name] and template[language][code] are required');
  }
  const approved = registered.find((entry) => entry.name === template.name && entry.language === code);
  if (!approved) {
    return { status: 404, code: 132001, message: `(#132001) Template name does not exist in the translation` };
  }
  const components = Array.isArray(template.components) ? (template.components as Json[]) : [];
  const bodies = components.filter((component) => component.type === 'body');
  const parameters = (bodies[0]?.parameters as Json[] | undefined) ?? [];
  if (bodies.length > 1 || parameters.length !== approved.bodyVariables) {
    return {
      status: 400,
      code: 132000,
      message: `(#132000) Number of parameters does not match the expected number of params (${approved.bodyVariables})`,
    };
  }
  for (const parameter of parameters) {
    if (parameter.type !== 'text' || typeof parameter.text !== 'string' || parameter.text === '') {
      return invalid('each body parameter is {type: text, text}');
    }
    if (badParameterText(parameter.text)) {
      return {
        status: 400,
        code: 132018,
        message:
          '(#132018) There was an issue with the parameters in your template: Param text cannot have new-line/tab characters or more than 4 consecutive spaces',
      };
    }
  }
  const buttons = components.filter((component) => component.type === 'button');
  const quickReplies = approved.quickReplies ?? [];
  for (const button of buttons) {
    const index = Number(button.index);
    const payload = asObject((button.parameters as Json[] | undefined)?.[0]);
    if (button.sub_type !== 'quick_reply' || typeof button.index !== 'string' || !(index < quickReplies.length)) {
      return invalid(`button ${String(button.index)}: the template has ${quickReplies.length} quick-reply buttons`);
    }
    if (payload?.type !== 'payload' || typeof payload.payload !== 'string') {
      return invalid('a quick-reply button parameter is {type: payload, payload}');
    }
  }
  const other = components.find((component) => component.type !== 'body' && component.type !== 'button');
  return other ? invalid(`component type ${String(other.type)} is not in this template`) : undefined;
}

/** Why Meta would refuse this body, or undefined when it has the documented shape. */
export function messageShapeProblem(body: Json, templates: readonly FakeTemplate[]): ShapeProblem | undefined {
  const type = body.type;
  const extra = unknownKey(body, ['messaging_product', 'recipient_type', 'to', 'type', 'context', String(type)], '');
  if (extra) return extra;
  if (body.messaging_product !== 'whatsapp') return invalid('messaging_product must be "whatsapp"');
  if (body.recipient_type !== undefined && body.recipient_type !== 'individual') {
    return invalid('recipient_type must be individual');
  }
  if (typeof body.to !== 'string' || !/^\d{6,15}$/.test(body.to)) return invalid('to must be the number in digits');
  if (type === 'text') return textProblem(asObject(body.text));
  if (type === 'interactive') return interactiveProblem(asObject(body.interactive));
  if (type === 'template') return templateProblem(asObject(body.template), templates);
  return invalid(`unsupported type ${String(type)}`);
}
