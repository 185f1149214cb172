import { useCallback, useEffect, useState } from 'react';
import type { MessageCopyDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';

/** After a forget: the copies other threads (branches) still hold, until forgotten there too or kept. */
export function useForgottenCopies(input: {
  token: string | null;
  threadId: string | null;
  onFatal(message: string): void;
}) {
  const { token, threadId, onFatal } = input;
  const [copies, setCopies] = useState<MessageCopyDto[]>([]);
  useEffect(() => setCopies([]), [threadId]);
  const forgetCopies = useCallback(() => {
    const pending = copies;
    setCopies([]);
    void Promise.all(
      pending.map((copy) =>
        requestJson(`/api/threads/${copy.threadId}/messages/${copy.messageId}?only=true`, { method: 'DELETE', token }),
      ),
    ).catch((error: unknown) => onFatal(ApiError.from(error).message));
  }, [copies, token, onFatal]);
  const keepCopies = useCallback(() => setCopies([]), []);
  return { copies, setCopies, forgetCopies, keepCopies };
}
