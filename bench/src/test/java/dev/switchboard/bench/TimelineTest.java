package dev.switchboard.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimelineTest {
    private static final long MS = 1_000_000L;

    @Test
    void slowWindowsCloseTogetherAreOneEpisodeAndThreadsAreMerged() {
        long start = 5_000 * MS;
        Timeline a = new Timeline(start, 0);
        Timeline b = new Timeline(start, 0);
        for (int i = 0; i < 100; i++) {
            a.add(start + i * MS, 900); // fast frames, windows 0-9
        }
        // A pause: slow frames in windows 50, 51 and 53 (one empty window between), on two threads.
        a.add(start + 505 * MS, 30_000);
        b.add(start + 515 * MS, 25_000);
        b.add(start + 531 * MS, 4_000);
        // Another, alone, far later.
        b.add(start + 2_000 * MS, 12_000);

        Timeline all = Timeline.merge(start, 0, List.of(a, b));
        assertEquals(104, all.frames());
        assertEquals(4, all.slowFrames());
        List<Timeline.Episode> episodes = all.episodes();
        assertEquals(List.of(new Timeline.Episode(50, 53, 3, 30_000), new Timeline.Episode(200, 200, 1, 12_000)),
                episodes);
        assertEquals(0.5, episodes.get(0).startSeconds(), 1e-9);
        assertEquals(40, episodes.get(0).lengthMillis());
    }

    @Test
    void describesTheShareAndTheWorstEpisodesFirst() {
        Timeline t = new Timeline(0, 0);
        for (int i = 0; i < 96; i++) {
            t.add(i * MS, 1_000);
        }
        t.add(300 * MS, 8_000);
        t.add(900 * MS, 20_000);
        t.add(905 * MS, 21_000);
        t.add(912 * MS, 5_000);
        String line = Timeline.merge(0, 0, List.of(t)).describe(3);
        assertTrue(line.contains("tail from 00:00:00.000: 4 of 100 frames (4.00%) took ≥ 4 ms, in 2 episodes"), line);
        assertTrue(line.contains("most at +0.90s 20 ms (3 frames, max 21.0 ms), +0.30s 10 ms (1 frames, max 8.0 ms): 100% of them"),
                line);
    }

    @Test
    void aFrameBeforeTheStartCountsInTheFirstWindow() {
        Timeline t = new Timeline(10 * MS, 0);
        t.add(0, 6_000);
        assertEquals(List.of(new Timeline.Episode(0, 0, 1, 6_000)), t.episodes());
    }
}
