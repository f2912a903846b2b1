/** The OpenAPI paths of the trial's routes (`study-routes.ts`). */
type JsonObject = Record<string, unknown>;

const errorResponse = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const envelope = (description: string, result: JsonObject): JsonObject => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string', enum: ['ok'] }, message: { type: 'string' }, result },
      },
    },
  },
});

const randomisationState: JsonObject = {
  type: ['object', 'null'],
  properties: {
    paused: { type: 'boolean' },
    changed_at: { type: ['string', 'null'], format: 'date-time' },
    changed_by: { type: ['string', 'null'] },
    reason: { type: ['string', 'null'] },
  },
};

export function studyOpenApiPaths(): JsonObject {
  return {
    '/study': {
      get: {
        tags: ['trial'],
        summary: 'The study design in force (STUDY_DESIGN_FILE) and its SHA-256 hash; both null without a design',
        responses: {
          '200': envelope('The design', {
            type: 'object',
            properties: { design: { type: ['object', 'null'] }, hash: { type: ['string', 'null'] } },
          }),
          '401': errorResponse('Missing or wrong bearer token'),
        },
      },
    },
    '/study/allocations': {
      get: {
        tags: ['trial'],
        summary: 'The allocation report: counts per arm and per stratum, each stratum’s block progress',
        responses: {
          '200': envelope('The report; null without a design', { type: ['object', 'null'] }),
          '401': errorResponse('Missing or wrong bearer token'),
        },
      },
    },
    '/study/randomisation': {
      get: {
        tags: ['trial'],
        summary: 'Whether the draws at decision points are paused by staff, and the last change (who, when, why)',
        responses: {
          '200': envelope('The state; null without a design', randomisationState),
          '401': errorResponse('Missing or wrong bearer token'),
        },
      },
    },
    '/study/randomisation/pause': {
      post: {
        tags: ['trial'],
        summary:
          'Pause the draws at decision points: each still gets its decision row, unavailable (randomisation_paused)',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['reason'],
                additionalProperties: false,
                properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } },
              },
            },
          },
        },
        responses: {
          '200': envelope('The state after the change', randomisationState),
          '400': errorResponse('Empty reason, or no study design loaded'),
          '401': errorResponse('Missing or wrong bearer token'),
          '409': errorResponse('Randomisation is already paused'),
        },
      },
    },
    '/study/randomisation/resume': {
      post: {
        tags: ['trial'],
        summary: 'Resume the draws at decision points',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['reason'],
                additionalProperties: false,
                properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } },
              },
            },
          },
        },
        responses: {
          '200': envelope('The state after the change', randomisationState),
          '400': errorResponse('Empty reason, or no study design loaded'),
          '401': errorResponse('Missing or wrong bearer token'),
          '409': errorResponse('Randomisation is already running'),
        },
      },
    },
    '/conversation/participants/{id}/decisions': {
      get: {
        tags: ['trial'],
        summary: 'The participant’s decision point decisions (one per moment), oldest first',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': envelope('The decisions', { type: 'array', items: { type: 'object' } }),
          '401': errorResponse('Missing or wrong bearer token'),
          '404': errorResponse('Unknown participant id'),
        },
      },
    },
    '/conversation/participants/{id}/arm': {
      post: {
        tags: ['trial'],
        summary: 'Staff override of a participant’s arm, with a reason (recorded as an arm-overridden event)',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['arm', 'reason'],
                additionalProperties: false,
                properties: { arm: { type: 'string' }, reason: { type: 'string', minLength: 1 } },
              },
            },
          },
        },
        responses: {
          '200': envelope('The allocation after the override', { type: 'object' }),
          '400': errorResponse('Unknown arm, empty reason, or no study design loaded'),
          '401': errorResponse('Missing or wrong bearer token'),
          '404': errorResponse('The participant has no allocation'),
        },
      },
    },
  };
}
