import { chatCompletion, chatCompletionChunks, chatHead, chatStreamShape } from '../../openai/chat-response.ts';
import { hostedErrorBody } from '../hosted-error.ts';
import type { HostedFace } from './hosted-face.ts';

const SYSTEM_FINGERPRINT = 'svc-hosted';

/**
 * Chat completions as the hosted tier answers them: the local route's chunks and completion,
 * with `svc_route` and `svc_outcome` on the completion and on the stream's usage chunk.
 */
export const chatFace: HostedFace = {
  answerShape(model) {
    const head = chatHead(model, SYSTEM_FINGERPRINT);
    return {
      stream: { ...chatStreamShape(head), error: (error) => hostedErrorBody(error) },
      whole: (result, evidence) => chatCompletion(head, [result], evidence),
    };
  },
  replayStream(completion) {
    return { chunks: chatCompletionChunks(completion, { svc_route: completion.svc_route, svc_outcome: completion.svc_outcome }), doneSentinel: true };
  },
};
