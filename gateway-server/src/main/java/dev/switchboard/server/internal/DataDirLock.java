package dev.switchboard.server.internal;

import dev.switchboard.server.StartupException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The exclusive hold of one gateway on its data directory: an OS file lock on {@code
 * switchboard.lock} inside it, taken before the store is opened, so a second gateway started on
 * the same directory stops before it reads or repairs history the first one is writing. The OS
 * drops the lock when the process dies, even by {@code kill -9}; the file itself stays and is
 * harmless. The holder's pid is written into the file for the second gateway's message.
 */
public final class DataDirLock implements AutoCloseable {
    public static final String FILE_NAME = "switchboard.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Creates the directory if need be and locks it, or says in one line why it cannot. */
    public static DataDirLock acquire(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new StartupException("cannot create the data directory " + dataDir + ": " + reason(e)
                    + "; choose another with --data-dir");
        }
        Path file = dataDir.resolve(FILE_NAME);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new StartupException("the data directory " + dataDir + " cannot be written: " + reason(e)
                    + "; choose another with --data-dir");
        }
        try {
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException sameProcess) {
                lock = null;
            }
            if (lock == null) {
                String holder = holder(channel);
                channel.close();
                throw new StartupException("the data directory " + dataDir + " is in use by another gateway"
                        + holder + "; stop it, or give this one another --data-dir");
            }
            byte[] pid = (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(pid), 0);
            return new DataDirLock(channel, lock);
        } catch (IOException e) {
            closeQuietly(channel);
            throw new StartupException("cannot lock the data directory " + dataDir + ": " + reason(e));
        }
    }

    /** " (pid N)" as the holder wrote it, or nothing when it cannot be read. */
    private static String holder(FileChannel channel) {
        try {
            ByteBuffer buf = ByteBuffer.allocate(32);
            channel.read(buf, 0);
            String pid = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).strip();
            return pid.matches("[0-9]+") ? " (pid " + pid + ")" : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileAlreadyExistsException f) {
            return f.getFile() + " exists and is not a directory";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage();
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Already failing; the first error is the one reported.
        }
    }

    /** Gives the directory up. */
    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // Closing the channel below releases it as well.
        }
        closeQuietly(channel);
    }
}
