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
