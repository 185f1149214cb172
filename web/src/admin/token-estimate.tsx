import { useEffect, useState } from 'react';
import type { TokenEstimateDto } from '../../../src/shared/admin-api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';

/**
 * The chat model's prompt-token estimate against the provider's counts (the ratio /metrics reports as
 * chat_prompt_token_estimate_ratio, its inverse), and the correction the budget guard and the fold trigger apply.
 */
export function TokenEstimate() {
  const [estimate, setEstimate] = useState<TokenEstimateDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    requestJson<TokenEstimateDto>('/api/admin/token-estimate').then(setEstimate, (caught: unknown) =>
      setError(ApiError.from(caught).message),
    );
  }, []);
  return (
    <section className="card" aria-labelledby="estimate-heading">
      <h2 id="estimate-heading">Token estimate</h2>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {estimate ? (
        <p aria-label="Estimate correction">
          {estimate.observedRatio === null
            ? `${estimate.model}: no usage reported yet; estimates are used as they are.`
            : `${estimate.model}: the provider counts ${estimate.observedRatio.toFixed(2)}× our estimate (weighted over ${estimate.samples} chat calls). ` +
              `The budget guard and the fold trigger multiply estimates by ${estimate.factor.toFixed(2)} (never less than 1, at most ${estimate.maxFactor}).`}
        </p>
      ) : null}
    </section>
  );
}
