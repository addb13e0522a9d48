using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class ConfigParserTests
{
    [Theory]
    [InlineData("port = 4222")]
    [InlineData("port: 4222")]
    [InlineData("port 4222")]
    [InlineData("port=4222")]
    [InlineData("port:4222")]
    [InlineData("port\t=\t4222")]
    [InlineData("  port = 4222  ")]
    [InlineData("port = 4222;")]
    [InlineData("\"port\" = 4222")]
    [InlineData("'port': 4222")]
    [InlineData("{ port: 4222 }")]
    [InlineData("{\n  \"port\": 4222\n}\n")]
    public void Every_key_value_form_gives_the_same_entry(string text)
    {
        var map = ConfigParser.Parse(text);

        Assert.Equal(4222L, Assert.Single(map).Value);
        Assert.Equal("port", map.Keys.Single());
    }

    [Fact]
    public void Keys_are_case_insensitive_and_keep_file_order()
    {
        var map = ConfigParser.Parse("Zeta = 1\nalpha = 2\nMiddle = 3\n");

        Assert.Equal(["Zeta", "alpha", "Middle"], map.Keys);
        Assert.Equal(1L, map["zeta"]);
        Assert.Equal(2L, map["ALPHA"]);
        Assert.True(map.ContainsKey("middle"));
    }

    [Theory]
    [InlineData("exports: [ } ]")]
    [InlineData("a: [1, ]")]
    [InlineData("a: { b: ; }")]
    [InlineData("a: [")]
    public void A_missing_value_is_a_config_error_not_a_crash(string text)
    {
        // Found by the fuzzer (fuzz/corpus/config/crash-empty-value-in-array): an empty value indexed past its end.
        var e = Record.Exception(() => ConfigParser.Parse(text));
        Assert.True(e is null or ConfigException, $"{text}: {e}");
    }

    [Fact]
    public void A_key_set_twice_takes_the_later_value()
    {
        var map = ConfigParser.Parse("port = 1\nhost = x\nPORT = 2\n");

        Assert.Equal(2L, map["port"]);
        Assert.Equal(2, map.Count);
        Assert.Equal(3, map.Entries[0].Position.Line);
    }

    [Fact]
    public void Semicolons_and_commas_separate_entries_on_one_line()
    {
        var map = ConfigParser.Parse("a = 1; b = 2, c = 3");

        Assert.Equal([1L, 2L, 3L], map.Values);
    }

    [Fact]
    public void Hash_and_slash_comments_are_ignored_everywhere()
    {
        var map = ConfigParser.Parse("""
            # leading comment
            // another one
            port = 4222 # trailing
            host = "127.0.0.1" // trailing too
            block {
              # inside a block
              a = 1 // after a value
            }
            list = [
              1, # in an array
              // on its own line
              2
            ]
            """);

        Assert.Equal(4222L, map["port"]);
        Assert.Equal("127.0.0.1", map["host"]);
        Assert.Equal(1L, Assert.IsType<ConfigMap>(map["block"])["a"]);
        Assert.Equal([1L, 2L], Assert.IsType<List<object?>>(map["list"]));
    }

    [Fact]
    public void A_hash_inside_a_quoted_string_is_not_a_comment()
    {
        var map = ConfigParser.Parse("a = \"x # y\"\nb = 'p // q'");

        Assert.Equal("x # y", map["a"]);
        Assert.Equal("p // q", map["b"]);
    }

    [Theory]
    [InlineData("auth { user = a }")]
    [InlineData("auth = { user = a }")]
    [InlineData("auth: { user: a }")]
    [InlineData("auth {\n  user = a\n}")]
    [InlineData("auth\n{\n  user: a\n}")]
    [InlineData("auth{user=a}")]
    [InlineData("auth { user = a; }")]
    [InlineData("auth { user = a, }")]
    public void Blocks_are_written_with_or_without_a_separator(string text)
    {
        var auth = Assert.IsType<ConfigMap>(ConfigParser.Parse(text)["auth"]);

        Assert.Equal("a", auth["user"]);
    }

    [Fact]
    public void Blocks_nest()
    {
        var map = ConfigParser.Parse("""
            outer {
              middle {
                inner { deep = true }
                sibling = 2
              }
              empty {}
            }
            """);

        var outer = Assert.IsType<ConfigMap>(map["outer"]);
        var middle = Assert.IsType<ConfigMap>(outer["middle"]);
        Assert.Equal(true, Assert.IsType<ConfigMap>(middle["inner"])["deep"]);
        Assert.Equal(2L, middle["sibling"]);
        Assert.Empty(Assert.IsType<ConfigMap>(outer["empty"]));
    }

    [Fact]
    public void Arrays_take_commas_new_lines_and_a_trailing_comma()
    {
        var map = ConfigParser.Parse("""
            inline = [a, b, c]
            tight = [1,2,3]
            multi = [
              "x"
              'y',
              z
            ]
            trailing = [1, 2, ]
            empty = []
            mixed = [1, 2.5, true, "s", [nested], { k = v }]
            """);

        Assert.Equal(["a", "b", "c"], Assert.IsType<List<object?>>(map["inline"]));
        Assert.Equal([1L, 2L, 3L], Assert.IsType<List<object?>>(map["tight"]));
        Assert.Equal(["x", "y", "z"], Assert.IsType<List<object?>>(map["multi"]));
        Assert.Equal([1L, 2L], Assert.IsType<List<object?>>(map["trailing"]));
        Assert.Empty(Assert.IsType<List<object?>>(map["empty"]));
        var mixed = Assert.IsType<List<object?>>(map["mixed"]);
        Assert.Equal(1L, mixed[0]);
        Assert.Equal(2.5, mixed[1]);
        Assert.Equal(true, mixed[2]);
        Assert.Equal("s", mixed[3]);
        Assert.Equal(["nested"], Assert.IsType<List<object?>>(mixed[4]));
        Assert.Equal("v", Assert.IsType<ConfigMap>(mixed[5])["k"]);
    }

    [Fact]
    public void Arrays_of_blocks_span_lines()
    {
        var map = ConfigParser.Parse("""
            users = [
              {user: alice, password: one}
              {
                user: bob
                password: two
              },
            ]
            """);

        var users = Assert.IsType<List<object?>>(map["users"]);
        Assert.Equal(2, users.Count);
        Assert.Equal("alice", Assert.IsType<ConfigMap>(users[0])["user"]);
        Assert.Equal("two", Assert.IsType<ConfigMap>(users[1])["password"]);
    }

    [Fact]
    public void Double_quoted_strings_take_escapes_and_single_quoted_do_not()
    {
        var map = ConfigParser.Parse("""
            d = "tab\there \"q\" back\\slash nl\n hex\x41"
            s = 'raw \t \n \x41'
            """);

        Assert.Equal("tab\there \"q\" back\\slash nl\n hexA", map["d"]);
        Assert.Equal("raw \\t \\n \\x41", map["s"]);
    }

    [Fact]
    public void Quoted_strings_keep_separators_and_numbers_as_text()
    {
        var map = ConfigParser.Parse("a = \"1, 2; 3 } ]\"\nb = \"4222\"\nc = 'true'\nd = \"$NOT_A_VARIABLE\"\ne = \"\"");

        Assert.Equal("1, 2; 3 } ]", map["a"]);
        Assert.Equal("4222", map["b"]);
        Assert.Equal("true", map["c"]);
        Assert.Equal("$NOT_A_VARIABLE", map["d"]);
        Assert.Equal("", map["e"]);
    }

    [Fact]
    public void Unquoted_strings_run_to_the_end_of_the_value()
    {
        var map = ConfigParser.Parse("""
            host = localhost
            url = nats://user:pass@host:4222/path
            listen = 127.0.0.1:4222
            duration = 1h30m
            subject = foo.*.>
            """);

        Assert.Equal("localhost", map["host"]);
        Assert.Equal("nats://user:pass@host:4222/path", map["url"]);
        Assert.Equal("127.0.0.1:4222", map["listen"]);
        Assert.Equal("1h30m", map["duration"]);
        Assert.Equal("foo.*.>", map["subject"]);
    }

    [Fact]
    public void Block_strings_run_to_a_closing_parenthesis_on_its_own_line()
    {
        var map = ConfigParser.Parse("cert = (\n-----BEGIN-----\nabc (x)\n-----END-----\n)\nnext = 1\n");

        Assert.Equal("\n-----BEGIN-----\nabc (x)\n-----END-----\n", map["cert"]);
        Assert.Equal(1L, map["next"]);
    }

    [Theory]
    [InlineData("true", true)]
    [InlineData("TRUE", true)]
    [InlineData("yes", true)]
    [InlineData("Yes", true)]
    [InlineData("on", true)]
    [InlineData("false", false)]
    [InlineData("no", false)]
    [InlineData("OFF", false)]
    public void Booleans_accept_true_false_yes_no_on_off_in_any_case(string text, bool expected)
    {
        Assert.Equal(expected, ConfigParser.Parse($"b = {text}")["b"]);
    }

    [Theory]
    [InlineData("0", 0L)]
    [InlineData("4222", 4222L)]
    [InlineData("-1", -1L)]
    [InlineData("9223372036854775807", long.MaxValue)]
    public void Integers_are_longs(string text, long expected)
    {
        Assert.Equal(expected, ConfigParser.Parse($"n = {text}")["n"]);
    }

    [Theory]
    [InlineData("1.5", 1.5)]
    [InlineData("-0.25", -0.25)]
    [InlineData("10.0", 10.0)]
    public void Floats_are_doubles(string text, double expected)
    {
        Assert.Equal(expected, ConfigParser.Parse($"f = {text}")["f"]);
    }

    [Theory]
    [InlineData("1k", 1000L)]
    [InlineData("1K", 1000L)]
    [InlineData("1kb", 1024L)]
    [InlineData("1KB", 1024L)]
    [InlineData("1Ki", 1024L)]
    [InlineData("1kib", 1024L)]
    [InlineData("2m", 2_000_000L)]
    [InlineData("2MB", 2L * 1024 * 1024)]
    [InlineData("8mb", 8L * 1024 * 1024)]
    [InlineData("1g", 1_000_000_000L)]
    [InlineData("1GB", 1024L * 1024 * 1024)]
    [InlineData("1gib", 1024L * 1024 * 1024)]
    [InlineData("1t", 1_000_000_000_000L)]
    [InlineData("1TB", 1L << 40)]
    [InlineData("1p", 1_000_000_000_000_000L)]
    [InlineData("1pb", 1L << 50)]
    [InlineData("1e", 1_000_000_000_000_000_000L)]
    [InlineData("1EB", 1L << 60)]
    [InlineData("-1k", -1000L)]
    public void Size_suffixes_follow_nats_server(string text, long expected)
    {
        // nats-server conf/parse.go: a bare letter is decimal, with b/i/ib it is binary.
        Assert.Equal(expected, ConfigParser.Parse($"size = {text}")["size"]);
    }

    [Theory]
    [InlineData("10s")]
    [InlineData("500ms")]
    [InlineData("1h30m")]
    [InlineData("1m30s")]
    [InlineData("1.5s")]
    [InlineData("5min")]
    public void Unquoted_durations_that_are_not_sizes_stay_strings(string text)
    {
        Assert.Equal(text, ConfigParser.Parse($"d = {text}")["d"]);
    }

    [Fact]
    public void Zulu_dates_are_utc_datetimes()
    {
        var value = ConfigParser.Parse("when = 2024-05-06T07:08:09Z")["when"];

        Assert.Equal(new DateTime(2024, 5, 6, 7, 8, 9, DateTimeKind.Utc), value);
        Assert.Equal(DateTimeKind.Utc, Assert.IsType<DateTime>(value).Kind);
    }

    [Fact]
    public void Variables_resolve_from_earlier_keys_in_enclosing_blocks()
    {
        var map = ConfigParser.Parse("""
            TOKEN = "s3cr3t"
            PORT_NUMBER: 4333
            port = $PORT_NUMBER
            authorization {
              LOCAL = bob
              token = $TOKEN
              users = [ { user: $LOCAL, password: $TOKEN } ]
            }
            """);

        Assert.Equal(4333L, map["port"]);
        var auth = Assert.IsType<ConfigMap>(map["authorization"]);
        Assert.Equal("s3cr3t", auth["token"]);
        var user = Assert.IsType<ConfigMap>(Assert.Single(Assert.IsType<List<object?>>(auth["users"])));
        Assert.Equal("bob", user["user"]);
        Assert.Equal("s3cr3t", user["password"]);
        Assert.True(map.TryGetEntry("TOKEN", out var token) && token.IsUsedAsVariable);
        Assert.True(map.TryGetEntry("port", out var port) && !port.IsUsedAsVariable);
    }

    [Fact]
    public void Variables_can_hold_blocks_and_arrays()
    {
        var map = ConfigParser.Parse("""
            PERMS = { publish = "a.>" }
            LIST = [x, y]
            perms = $PERMS
            list = $LIST
            """);

        Assert.Equal("a.>", Assert.IsType<ConfigMap>(map["perms"])["publish"]);
        Assert.Equal(["x", "y"], Assert.IsType<List<object?>>(map["list"]));
    }

    [Fact]
    public void Variables_in_a_block_are_not_visible_outside_it()
    {
        var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse("b { INNER = 1 }\nx = $INNER_" + Guid.NewGuid().ToString("N")));

        Assert.Contains("can not be found", e.Message);
    }

    [Fact]
    public void Variables_fall_back_to_the_environment_and_are_parsed_as_values()
    {
        using var port = new EnvironmentVariable("4555");
        using var host = new EnvironmentVariable("example.org");
        using var size = new EnvironmentVariable("2MB");
        using var flag = new EnvironmentVariable("true");

        var map = ConfigParser.Parse($"port = ${port.Name}\nhost = ${host.Name}\nsize = ${size.Name}\nflag = ${flag.Name}");

        Assert.Equal(4555L, map["port"]);
        Assert.Equal("example.org", map["host"]);
        Assert.Equal(2L * 1024 * 1024, map["size"]);
        Assert.Equal(true, map["flag"]);
    }

    [Fact]
    public void Earlier_keys_win_over_the_environment()
    {
        using var env = new EnvironmentVariable("from-env");

        var map = ConfigParser.Parse($"{env.Name} = from-file\nx = ${env.Name}");

        Assert.Equal("from-file", map["x"]);
    }

    [Fact]
    public void An_undefined_variable_is_an_error_with_its_position()
    {
        var name = "COURIER_UNDEFINED_" + Guid.NewGuid().ToString("N");

        var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse($"a = 1\n  b = ${name}\n", "test.conf"));

        Assert.Equal(new ConfigPosition("test.conf", 2, 7), e.Position);
        Assert.Contains($"variable reference for '{name}' can not be found", e.Message);
        Assert.StartsWith("test.conf:2:7: ", e.Message);
    }

    [Fact]
    public void Environment_variables_referring_to_each_other_in_a_cycle_are_an_error()
    {
        var a = "COURIER_CYCLE_A_" + Guid.NewGuid().ToString("N");
        var b = "COURIER_CYCLE_B_" + Guid.NewGuid().ToString("N");
        Environment.SetEnvironmentVariable(a, "$" + b);
        Environment.SetEnvironmentVariable(b, "$" + a);
        try
        {
            var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse($"x = ${a}"));

            Assert.Contains("cycle", e.Message);
        }
        finally
        {
            Environment.SetEnvironmentVariable(a, null);
            Environment.SetEnvironmentVariable(b, null);
        }
    }

    [Fact]
    public void An_unquoted_bcrypt_hash_is_a_string_not_a_variable()
    {
        var hash = "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG";

        Assert.Equal(hash, ConfigParser.Parse($"password = {hash}")["password"]);
    }

    [Fact]
    public void Include_merges_a_file_relative_to_the_including_file()
    {
        using var dir = new TempConfigDirectory();
        dir.Write("conf/auth.conf", "user = alice\npassword = 'pw'\n");
        dir.Write("conf/limits.conf", "max_payload = 2MB\n");
        var main = dir.Write("conf/main.conf", """
            port = 4222
            include ./limits.conf
            authorization {
              include "auth.conf"
            }
            include 'limits.conf'; debug = true
            """);

        var map = ConfigParser.ParseFile(main);

        Assert.Equal(["port", "max_payload", "authorization", "debug"], map.Keys);
        Assert.Equal(2L * 1024 * 1024, map["max_payload"]);
        var auth = Assert.IsType<ConfigMap>(map["authorization"]);
        Assert.Equal("alice", auth["user"]);
        Assert.Equal("pw", auth["password"]);
        Assert.EndsWith("auth.conf", auth.Entries[0].Position.File);
        Assert.Equal(1, auth.Entries[0].Position.Line);
    }

    [Fact]
    public void Included_keys_serve_as_variables_afterwards()
    {
        using var dir = new TempConfigDirectory();
        dir.Write("vars.conf", "SECRET = abc\n");
        var main = dir.Write("main.conf", "include vars.conf\ntoken = $SECRET\n");

        var map = ConfigParser.ParseFile(main);

        Assert.Equal("abc", map["token"]);
        Assert.True(map.TryGetEntry("SECRET", out var secret) && secret.IsUsedAsVariable);
    }

    [Fact]
    public void A_missing_include_is_an_error_at_the_include_line()
    {
        using var dir = new TempConfigDirectory();
        var main = dir.Write("main.conf", "port = 1\ninclude nope.conf\n");

        var e = Assert.Throws<ConfigException>(() => ConfigParser.ParseFile(main));

        Assert.Equal(2, e.Position?.Line);
        Assert.Contains("error opening include file 'nope.conf'", e.Message);
    }

    [Fact]
    public void An_error_in_an_included_file_names_that_file_and_line()
    {
        using var dir = new TempConfigDirectory();
        var bad = dir.Write("bad.conf", "a = 1\nb = [1, 2\n");
        var main = dir.Write("main.conf", "include bad.conf\n");

        var e = Assert.Throws<ConfigException>(() => ConfigParser.ParseFile(main));

        Assert.Equal(bad, e.Position?.File);
    }

    [Fact]
    public void An_include_cycle_is_an_error()
    {
        using var dir = new TempConfigDirectory();
        dir.Write("a.conf", "include b.conf\n");
        dir.Write("b.conf", "include a.conf\n");

        var e = Assert.Throws<ConfigException>(() => ConfigParser.ParseFile(System.IO.Path.Combine(dir.Path, "a.conf")));

        Assert.Contains("include cycle", e.Message);
    }

    [Fact]
    public void The_same_file_may_be_included_twice_side_by_side()
    {
        using var dir = new TempConfigDirectory();
        dir.Write("common.conf", "x = 1\n");
        var main = dir.Write("main.conf", "a { include common.conf }\nb { include common.conf }\n");

        var map = ConfigParser.ParseFile(main);

        Assert.Equal(1L, Assert.IsType<ConfigMap>(map["b"])["x"]);
    }

    [Fact]
    public void A_missing_config_file_is_an_error()
    {
        var e = Assert.Throws<ConfigException>(() => ConfigParser.ParseFile("/nonexistent/courier/" + Guid.NewGuid() + ".conf"));

        Assert.Contains("error opening config file", e.Message);
        Assert.Null(e.Position);
    }

    [Fact]
    public void Positions_are_the_lines_and_columns_of_the_key_as_nats_servers_lexer_counts_them()
    {
        var map = ConfigParser.Parse("a = 1\n\n   b {\n\tc = 2\n   }\n", "x.conf");

        // Columns count from 1, except on the first line, where nats-server's lexer counts from 0.
        Assert.Equal(new ConfigPosition("x.conf", 1, 0), map.Entries[0].Position);
        Assert.Equal(new ConfigPosition("x.conf", 3, 4), map.Entries[1].Position);
        Assert.Equal(new ConfigPosition("x.conf", 4, 2), Assert.IsType<ConfigMap>(map["b"]).Entries[0].Position);
        Assert.Equal("x.conf:3:4", map.Entries[1].Position.ToString());
    }

    [Theory]
    [InlineData("a = 1\nb = [1, 2\n", 3, "array opened at")]
    [InlineData("a = 1\nb {\n  c = 1\n", 4, "block opened at")]
    [InlineData("a = 1\nb = \"open\n", 2, "double-quoted string")]
    [InlineData("a = 1\nb = 'open\n", 2, "single-quoted string")]
    [InlineData("a = 1\n= 2\n", 2, "unexpected key separator")]
    [InlineData("a = 1\nb =\n2\n", 2, "found a new line")]
    [InlineData("a = 1\nb\n", 2, "has no value")]
    [InlineData("a = 1\nb = 1 2\n", 2, "after the value of 'b'")]
    [InlineData("a = 1\n}\n", 2, "no block to close")]
    [InlineData("a = 1\nb = [1,, 2]\n", 2, "unexpected ','")]
    [InlineData("a = 1\nb = [1 2]\n", 2, "expected ',' or ']'")]
    [InlineData("a = 1\nb = \"bad \\q escape\"\n", 2, "invalid escape")]
    [InlineData("a = 1\nb = -abc\n", 2, "expected a number")]
    [InlineData("a = 1\nb = .5\n", 2, "floats must start with a digit")]
    [InlineData("a = 1\nb = 99999999999999999999\n", 2, "out of the range")]
    [InlineData("a = 1\nb = 9999999999EB\n", 2, "out of the range")]
    [InlineData("a = 1\nb = 1kbb\n", 2, "unknown size suffix")]
    [InlineData("a = 1\nb = 2024-13-01T00:00:00Z\n", 2, "Zulu")]
    [InlineData("a = 1\nb = $\n", 2, "variable name")]
    [InlineData("a = 1\ncert = (\nabc\n", 2, "block string")]
    [InlineData("a = 1\ninclude\nx.conf\n", 2, "expected an include file name but found a new line")]
    [InlineData("a = 1\ninclude [x]\n", 2, "expected an include file name but found '['")]
    public void Syntax_errors_carry_file_line_and_a_clear_message(string text, int line, string message)
    {
        var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse(text, "bad.conf"));

        Assert.Equal(line, e.Position?.Line);
        Assert.Equal("bad.conf", e.Position?.File);
        Assert.Contains(message, e.Message);
        Assert.StartsWith($"bad.conf:{line}:", e.Message);
    }

    [Fact]
    public void Text_without_a_file_name_is_reported_as_string()
    {
        var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse("a = [1"));

        Assert.StartsWith("<string>:1:", e.Message);
    }

    [Fact]
    public void Runaway_nesting_is_refused()
    {
        var text = "a = " + new string('[', 1000) + new string(']', 1000);

        var e = Assert.Throws<ConfigException>(() => ConfigParser.Parse(text));

        Assert.Contains("nested deeper", e.Message);
    }

    [Fact]
    public void An_empty_or_comment_only_file_is_an_empty_map()
    {
        Assert.Empty(ConfigParser.Parse(""));
        Assert.Empty(ConfigParser.Parse("# nothing here\n\n// or here\n"));
    }

    [Fact]
    public void Crlf_line_endings_work()
    {
        var map = ConfigParser.Parse("a = 1\r\nb {\r\n  c = x\r\n}\r\nd = [\r\n 1\r\n 2\r\n]\r\n");

        Assert.Equal(1L, map["a"]);
        Assert.Equal("x", Assert.IsType<ConfigMap>(map["b"])["c"]);
        Assert.Equal([1L, 2L], Assert.IsType<List<object?>>(map["d"]));
        Assert.Equal(5, map.Entries[2].Position.Line);
    }

    [Fact]
    public void A_realistic_nats_server_config_parses()
    {
        var map = ConfigParser.Parse("""
            # Client port of 4222 on all interfaces
            port: 4222
            server_name: courier-1
            http: localhost:8222

            jetstream {
              store_dir: /data/js
              max_memory_store: 1G
              max_file_store: 10G
            }

            authorization {
              timeout: 2.5
              users = [
                {user: admin, password: "$2a$11$W2zko751KUvVy59mUTWmpOdWjpEm5qhcCZRd05GjI/sSOT.xtiHyG"}
                {user: client, password: secret, permissions: {
                    publish: { allow: ["orders.>"], deny: "orders.secret" }
                    subscribe: ["_INBOX.>", "updates.*"]
                }}
              ]
            }

            max_payload: 8MB
            ping_interval: "30s"
            """);

        Assert.Equal(7, map.Count);
        var js = Assert.IsType<ConfigMap>(map["jetstream"]);
        Assert.Equal(1_000_000_000L, js["max_memory_store"]);
        var auth = Assert.IsType<ConfigMap>(map["authorization"]);
        Assert.Equal(2.5, auth["timeout"]);
        Assert.Equal(2, Assert.IsType<List<object?>>(auth["users"]).Count);
        Assert.Equal("30s", map["ping_interval"]);
    }
}
