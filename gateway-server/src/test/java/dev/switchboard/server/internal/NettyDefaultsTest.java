package dev.switchboard.server.internal;

import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class NettyDefaultsTest {
    @Test
    void eachSettingTheCommandLineDoesNotGiveTakesTheGatewaysDefault() {
        Properties none = new Properties();
        NettyDefaults.apply(none);
        assertThat(none).containsEntry(NettyDefaults.LEAK_DETECTION, "disabled")
                .containsEntry(NettyDefaults.RECYCLER_CAPACITY, "0").hasSize(2);
        assertThat(NettyDefaults.describe(none))
                .isEqualTo("io.netty.leakDetection.level=disabled, io.netty.recycler.maxCapacityPerThread=0");
    }

    @Test
    void aSettingTheCommandLineGivesIsKeptAndReportedAsGiven() {
        Properties given = new Properties();
        given.setProperty(NettyDefaults.LEAK_DETECTION, "simple");
        NettyDefaults.apply(given);
        assertThat(given).containsEntry(NettyDefaults.LEAK_DETECTION, "simple")
                .containsEntry(NettyDefaults.RECYCLER_CAPACITY, "0");
        assertThat(NettyDefaults.describe(given))
                .isEqualTo("io.netty.leakDetection.level=simple (given), io.netty.recycler.maxCapacityPerThread=0");
    }
}
