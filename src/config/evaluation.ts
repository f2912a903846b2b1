/** The settings of `promptpipe eval` only, apart from the service's. */
import { ConfigReader, type Environment, refuseProblems } from './reader.ts';

/** One model of `promptpipe eval` (the persona player or the judge): an OpenAI-compatible endpoint. */
export interface EvaluationModelSettings {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  temperature: number;
}

export interface EvaluationSettings {
  /** `EVAL_PERSONA_*`: plays personas without a script; undefined when neither a base URL nor a key is set. */
  persona: EvaluationModelSettings | undefined;
  /** `EVAL_JUDGE_*`: scores conversations with the rubric; undefined when neither a base URL nor a key is set. */
  judge: EvaluationModelSettings | undefined;
}

function readEvaluationModel(
  read: ConfigReader,
  prefix: string,
  temperature: number,
): EvaluationModelSettings | undefined {
  const baseUrl = read.string(`${prefix}_BASE_URL`);
  const apiKey = read.string(`${prefix}_API_KEY`);
  if (baseUrl !== undefined && !URL.canParse(baseUrl))
    read.problems.push(`${prefix}_BASE_URL must be a URL (got "${baseUrl}")`);
  const settings = {
    baseUrl,
    apiKey,
    model: read.string(`${prefix}_MODEL`) ?? 'gpt-4o-mini',
    temperature: read.number(`${prefix}_TEMPERATURE`, temperature, (n) => n >= 0 && n <= 2, 'a number from 0 to 2'),
  };
  return baseUrl === undefined && apiKey === undefined ? undefined : settings;
}

/**
 * The settings of `promptpipe eval` only, apart from the service's: the persona model (`EVAL_PERSONA_*`, warm by
 * default so personas vary) and the judge (`EVAL_JUDGE_*`, temperature 0 by default so scores repeat).
 */
export function loadEvaluationSettings(env: Environment): EvaluationSettings {
  const read = new ConfigReader(env);
  const settings = {
    persona: readEvaluationModel(read, 'EVAL_PERSONA', 0.8),
    judge: readEvaluationModel(read, 'EVAL_JUDGE', 0),
  };
  refuseProblems(read);
  return settings;
}
