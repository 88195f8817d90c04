// The dialects the page speaks, in the order the mirror shows them.

import { HaiClient } from './hai.js';
import { AguiWsClient } from './agui-ws.js';
import { AguiSseClient } from './agui-sse.js';
import { VoiceAssistClient } from './voiceassist.js';
import { AgentScopeClient } from './agentscope.js';

export const DIALECTS = [HaiClient, AguiWsClient, AguiSseClient, VoiceAssistClient, AgentScopeClient];

export function dialectByKey(key) {
  return DIALECTS.find((d) => d.key === key);
}
