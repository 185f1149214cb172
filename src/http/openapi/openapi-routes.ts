import { Router } from 'express';
import { openApiDocument } from './openapi-document';

/** `GET /api/openapi.json`: the OpenAPI document, no auth. */
export function openApiRoutes(): Router {
  const router = Router();
  router.get('/openapi.json', (_request, response) => {
    response.json(openApiDocument());
  });
  return router;
}
