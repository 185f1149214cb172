export { externalTools } from './external-tools';
export { signWebhook, signedHeaders, verifyWebhook, SIGNATURE_HEADER, SIGNATURE_TOLERANCE_MS, TIMESTAMP_HEADER } from './webhook-signature';
export type { SignatureCheck } from './webhook-signature';
