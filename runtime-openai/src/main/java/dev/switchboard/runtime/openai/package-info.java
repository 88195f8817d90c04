/**
 * The {@code openai} runtime: any server that speaks the OpenAI Chat Completions API (OpenAI,
 * vLLM, Ollama, llama.cpp, LiteLLM), streamed, with a tool loop over HTTP tools.
 */
package dev.switchboard.runtime.openai;
