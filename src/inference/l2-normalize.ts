/**
 * The vector scaled to unit Euclidean length, as OpenAI, Ollama and llama.cpp's server return
 * embeddings (llama-server's default `embd_normalize: 2`), so a dot product is the cosine
 * similarity. A zero vector stays zero rather than becoming NaN. The components are rounded to
 * float32, what llama.cpp computes in, so the `float` answer and the float32 `base64` answer
 * carry exactly the same numbers.
 */
export function l2Normalize(vector: ArrayLike<number>): number[] {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  return Array.from(vector, (x) => (norm > 0 ? Math.fround(x / norm) : 0));
}
