package dev.switchboard.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * The official AG-UI 1.0 client ({@code @ag-ui/client} HttpAgent, from npm) runs every demo flow
 * against {@code POST /agui}; every event is checked with the official zod schemas and any
 * warning the client prints fails the flow.
 */
class AguiOfficialClientTest {
    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension();

    @Test
    void officialClientRunsEveryDemoFlowWithoutWarningOrRejection() throws Exception {
        NodeClient.Result r = NodeClient.run("agui-official-client.mjs", 120, "http://127.0.0.1:" + gateway.port());
        assertThat(r.lines()).as(r.output()).contains("8 passed, 0 failed");
        assertThat(r.exitCode()).as(r.output()).isZero();
    }
}
