using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class CommandLineTests
{
    private static CommandLineFlags Run(params string[] args)
    {
        var result = CommandLine.Parse(args);
        Assert.True(result.Action == CommandLineAction.Run, result.Error);
        return result.Flags;
    }

    private static string Fails(params string[] args)
    {
        var result = CommandLine.Parse(args);
        Assert.Equal(CommandLineAction.Error, result.Action);
        return result.Error!;
    }

    [Theory]
    [InlineData("-p", "4333")]
    [InlineData("--p", "4333")]
    [InlineData("-port", "4333")]
    [InlineData("--port", "4333")]
    [InlineData("-p=4333")]
    [InlineData("--port=4333")]
    public void Port_takes_every_go_flag_form(params string[] args)
    {
        Assert.Equal(4333, Run(args).Port);
    }

    [Theory]
    [InlineData("-p", "-1")]
    [InlineData("--port=-1")]
    public void Port_minus_one_asks_for_a_random_port(params string[] args)
    {
        Assert.Equal(-1, Run(args).Port);
    }

    [Fact]
    public void No_arguments_run_with_nothing_set()
    {
        var flags = Run();

        Assert.Null(flags.Port);
        Assert.Null(flags.Host);
        Assert.Null(flags.Debug);
        Assert.Null(flags.ConfigFile);
    }

    [Fact]
    public void String_and_int_flags_bind_to_their_fields()
    {
        var flags = Run(
            "-a", "127.0.0.1", "-n", "srv", "-m", "8222", "-c", "x.conf", "-sd", "/data", "--user", "u",
            "--pass", "p", "--auth", "t", "-l", "log.txt", "-P", "pid.txt", "--ports_file_dir", "/tmp/p");

        Assert.Equal("127.0.0.1", flags.Host);
        Assert.Equal("srv", flags.ServerName);
        Assert.Equal(8222, flags.HttpPort);
        Assert.Equal("x.conf", flags.ConfigFile);
        Assert.Equal("/data", flags.StoreDir);
        Assert.Equal("u", flags.Username);
        Assert.Equal("p", flags.Password);
        Assert.Equal("t", flags.Token);
        Assert.Equal("log.txt", flags.LogFile);
        Assert.Equal("pid.txt", flags.PidFile);
        Assert.Equal("/tmp/p", flags.PortsFileDir);
    }

    [Theory]
    [InlineData("--addr")]
    [InlineData("--net")]
    [InlineData("-a")]
    public void Host_has_three_names(string flag)
    {
        Assert.Equal("::1", Run(flag, "::1").Host);
    }

    [Theory]
    [InlineData("-n")]
    [InlineData("--name")]
    [InlineData("--server_name")]
    public void Server_name_has_three_names(string flag)
    {
        Assert.Equal("x", Run(flag, "x").ServerName);
    }

    [Theory]
    [InlineData("--config")]
    [InlineData("--http_port")]
    [InlineData("--store_dir")]
    [InlineData("--log")]
    [InlineData("--pid")]
    public void Long_names_work_for_value_flags(string flag)
    {
        var value = flag == "--http_port" ? "9000" : "v";

        var flags = Run(flag, value);

        Assert.Contains(value, new object?[] { flags.ConfigFile, flags.HttpPort?.ToString(), flags.StoreDir, flags.LogFile, flags.PidFile });
    }

    [Theory]
    [InlineData("-js")]
    [InlineData("--js")]
    [InlineData("-jetstream")]
    [InlineData("--jetstream")]
    [InlineData("-js=true")]
    [InlineData("--jetstream=1")]
    public void JetStream_is_a_bool_flag(string flag)
    {
        Assert.True(Run(flag).JetStream);
    }

    [Fact]
    public void A_bool_flag_takes_an_explicit_false()
    {
        Assert.False(Run("-js=false").JetStream);
        Assert.False(Run("-D=0").Debug);
    }

    [Fact]
    public void Debug_and_trace_flags()
    {
        var d = Run("-D");
        Assert.True(d.Debug);
        Assert.Null(d.Trace);

        var v = Run("--trace");
        Assert.True(v.Trace);
        Assert.Null(v.Debug);

        var dv = Run("-DV");
        Assert.True(dv.Debug);
        Assert.True(dv.Trace);

        var both = Run("--debug", "-V");
        Assert.True(both.Debug);
        Assert.True(both.Trace);
    }

    [Fact]
    public void A_bool_flag_does_not_take_the_next_argument()
    {
        var flags = Run("-D", "-p", "1234");

        Assert.True(flags.Debug);
        Assert.Equal(1234, flags.Port);
    }

    [Fact]
    public void Flags_are_case_sensitive()
    {
        Assert.True(Run("-V").Trace);
        Assert.Contains("flag provided but not defined: -d", Fails("-d"));
    }

    [Fact]
    public void The_last_of_repeated_flags_wins()
    {
        Assert.Equal(2, Run("-p", "1", "--port=2").Port);
    }

    [Theory]
    [InlineData("-v")]
    [InlineData("--version")]
    [InlineData("version")]
    [InlineData("-p", "1", "VERSION")]
    public void Version_forms_ask_to_show_the_version(params string[] args)
    {
        Assert.Equal(CommandLineAction.ShowVersion, CommandLine.Parse(args).Action);
    }

    [Theory]
    [InlineData("-h")]
    [InlineData("--help")]
    [InlineData("help")]
    [InlineData("-p", "1", "-h")]
    public void Help_forms_ask_to_show_the_usage(params string[] args)
    {
        Assert.Equal(CommandLineAction.ShowHelp, CommandLine.Parse(args).Action);
    }

    [Fact]
    public void Version_wins_over_help_as_in_nats_server()
    {
        Assert.Equal(CommandLineAction.ShowVersion, CommandLine.Parse(["-h", "-v"]).Action);
    }

    [Theory]
    [InlineData("flag provided but not defined: -foo", "-foo")]
    [InlineData("flag provided but not defined: -max_payload", "--max_payload", "1")]
    [InlineData("flag provided but not defined: -tlsfoo", "--tlsfoo")]
    [InlineData("flag needs an argument: -p", "-p")]
    [InlineData("invalid value \"abc\" for flag -p: parse error", "-p", "abc")]
    [InlineData("invalid value \"99999999999\" for flag -port: parse error", "--port=99999999999")]
    [InlineData("invalid boolean value \"maybe\" for -js: parse error", "-js=maybe")]
    [InlineData("bad flag syntax: ---p", "---p")]
    [InlineData("bad flag syntax: -=1", "-=1")]
    [InlineData("unrecognized command: \"start\"", "start")]
    [InlineData("unrecognized command: \"false\"", "-js", "false")]
    public void Bad_flags_are_errors_worded_as_go(string message, params string[] args)
    {
        Assert.Equal(message, Fails(args));
    }

    [Fact]
    public void Double_dash_ends_the_flags()
    {
        Assert.Equal(CommandLineAction.ShowVersion, CommandLine.Parse(["-D", "--", "version"]).Action);
        Assert.Equal(CommandLineAction.Error, CommandLine.Parse(["--", "-D"]).Action);
    }

    [Fact]
    public void Ignored_nats_server_flags_are_accepted_with_a_warning()
    {
        var result = CommandLine.Parse(["--logtime_utc", "--syslog", "-r", "udp://x:514", "-p", "1"]);

        Assert.Equal(CommandLineAction.Run, result.Action);
        Assert.Equal(1, result.Flags.Port);
        Assert.Equal(3, result.Warnings.Count);
        Assert.Contains("flag -syslog is not supported by Courier and is ignored", result.Warnings);
    }

    [Fact]
    public void Logtime_log_size_limit_and_signal_flags_are_parsed()
    {
        var result = CommandLine.Parse(["-T=false", "--log_size_limit", "1000", "-sl", "reload=/tmp/x.pid"]);

        Assert.Equal(CommandLineAction.Run, result.Action);
        Assert.Empty(result.Warnings);
        Assert.False(result.Flags.Logtime);
        Assert.Equal(1000, result.Flags.LogSizeLimit);
        Assert.Equal("reload=/tmp/x.pid", result.Flags.Signal);
    }

    [Fact]
    public void Usage_lists_the_implemented_flags()
    {
        foreach (var flag in new[] { "--addr", "--port", "--server_name", "--http_port", "--config", "--jetstream", "--store_dir",
            "--user", "--pass", "--auth", "--debug", "--trace", "-DV", "--log", "--logtime", "--signal", "--pid", "--ports_file_dir", "--help", "--version" })
        {
            Assert.Contains(flag, CommandLine.Usage);
        }
    }
}
