export { externalTools, IDEMPOTENCY_HEADER, runnerSecretOf } from './external-tools';
export {
  signWebhook,
  signedHeaders,
  verifyWebhook,
  SIGNATURE_HEADER,
  SIGNATURE_PREFIX,
  SIGNATURE_TOLERANCE_MS,
  TIMESTAMP_HEADER,
} from './webhook-signature';
export type { SignatureCheck, SignedRequest } from './webhook-signature';
