package dev.switchboard.store.sqlite;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Reads a store's files with plain JDBC, beside the store, as the tests of its schema do. */
final class SqliteFiles {
    private SqliteFiles() {
    }

    /** The rows' values of the first column. */
    static List<String> query(Path file, String sql) throws SQLException {
        return query(file, sql, null);
    }

    /** The rows' values of one column: the first, or the one named. */
    static List<String> query(Path file, String sql, String column) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(column == null ? rs.getString(1) : rs.getString(column));
            }
            return rows;
        }
    }
}
