import { getLlama, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { tinyModelPath } from './daemon-process.ts';

/** The tiny fixture model loaded in this process (no daemon), with one single-sequence context. */
export interface TinyLlama {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
}

/** `modelPath`: one of the fixture's variants (default: the plain one). */
export async function loadTinyLlama(contextSize: number, modelPath = tinyModelPath()): Promise<TinyLlama> {
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1, progressLogs: false });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize, sequences: 1 });
  return { llama, model, context };
}

export async function disposeTinyLlama({ llama, model, context }: TinyLlama): Promise<void> {
  await context.dispose();
  await model.dispose();
  await llama.dispose();
}
