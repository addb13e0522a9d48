using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class ServerConfigurationTests
{
    [Fact]
    public void Without_arguments_the_options_are_nats_server_defaults()
    {
        var config = ServerConfiguration.Load([]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        Assert.Equal("0.0.0.0", config.Options.Host);
        Assert.Equal(4222, config.Options.Port);
        Assert.Null(config.Options.ConfigFile);
        Assert.Empty(config.Warnings);
    }

    [Fact]
    public void Flags_alone_set_the_options()
    {
        var config = ServerConfiguration.Load(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", "/tmp/js", "-DV", "--auth", "tok"]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        Assert.Equal("127.0.0.1", config.Options.Host);
        Assert.Equal(-1, config.Options.Port);
        Assert.True(config.Options.JetStream);
        Assert.Equal("/tmp/js", config.Options.StoreDir);
        Assert.True(config.Options.Debug);
        Assert.True(config.Options.Trace);
        Assert.Equal("tok", config.Options.Token);
    }

    [Fact]
    public void The_config_file_is_loaded_and_flags_given_explicitly_win()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", """
            host: 10.1.1.1
            port: 5222
            server_name: from-file
            debug: true
            trace: true
            max_payload: 2MB
            jetstream: enabled
            """);

        var config = ServerConfiguration.Load(["-c", file, "--port=6222", "-D=false", "-n", "from-flags"]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        var options = config.Options;
        Assert.Equal(file, options.ConfigFile);
        Assert.Equal("10.1.1.1", options.Host);
        Assert.Equal(6222, options.Port);
        Assert.Equal("from-flags", options.ServerName);
        Assert.False(options.Debug);
        Assert.True(options.Trace);
        Assert.Equal(2 * 1024 * 1024, options.MaxPayload);
        Assert.True(options.JetStream);
    }

    [Fact]
    public void Flags_override_whatever_their_position_relative_to_c()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "port: 5222\nauthorization { user: file-user, password: file-pass }\n");

        var config = ServerConfiguration.Load(["--user", "flag-user", "--config", file]);

        Assert.Equal(5222, config.Options.Port);
        Assert.Equal("flag-user", config.Options.Username);
        Assert.Equal("file-pass", config.Options.Password);
    }

    [Fact]
    public void Config_warnings_and_flag_warnings_are_returned()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "port: 5222\nsyslog: true\n");

        var config = ServerConfiguration.Load(["-c", file, "--syslog"]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        Assert.Equal(2, config.Warnings.Count);
        Assert.Contains(config.Warnings, w => w == $"{file}:2:1: field \"syslog\" is not supported by Courier and is ignored");
    }

    [Fact]
    public void An_unknown_key_refuses_the_start_with_nats_servers_error_and_position()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "port: 5222\nfoo: 1\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal($"{file}:2:1: unknown field \"foo\"", config.Error);
    }

    [Fact]
    public void A_lame_duck_grace_period_not_under_the_duration_is_refused()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"30s\"\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal("lame duck grace period (30s) should be strictly lower than lame duck duration (30s)", config.Error);
    }

    [Fact]
    public void Signal_flag_asks_to_send_the_signal_without_reading_the_config()
    {
        var config = ServerConfiguration.Load(["-c", "/nonexistent/server.conf", "--signal", "ldm=123"]);

        Assert.Equal(CommandLineAction.SendSignal, config.Action);
        Assert.Equal("ldm=123", config.Signal);
    }

    [Fact]
    public void A_config_error_is_reported_with_file_and_line()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "port: 5222\nhost = [\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.StartsWith($"{file}:3:", config.Error);
    }

    [Fact]
    public void A_wrong_type_in_the_config_is_an_error()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "port = \"abc\"\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal($"{file}:1:0: expected an integer for \"port\", got string \"abc\"", config.Error);
    }

    [Fact]
    public void A_missing_config_file_is_an_error()
    {
        var config = ServerConfiguration.Load(["-c", "/nonexistent/" + Guid.NewGuid() + ".conf"]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Contains("error opening config file", config.Error);
    }

    [Fact]
    public void A_flag_error_comes_with_the_usage()
    {
        var config = ServerConfiguration.Load(["--bogus"]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.StartsWith("flag provided but not defined: -bogus\n", config.Error);
        Assert.Contains(CommandLine.Usage, config.Error);
    }

    [Theory]
    [InlineData(true, "-v")]
    [InlineData(false, "--help")]
    public void Version_and_help_skip_the_config(bool version, string flag)
    {
        var config = ServerConfiguration.Load([flag, "-c", "/nonexistent.conf"]);

        Assert.Equal(version ? CommandLineAction.ShowVersion : CommandLineAction.ShowHelp, config.Action);
        Assert.Null(config.Error);
    }

    [Fact]
    public void Port_zero_means_the_default_port_and_empty_host_the_default_host()
    {
        var config = ServerConfiguration.Load(["-p", "0", "-a", ""]);

        Assert.Equal(4222, config.Options.Port);
        Assert.Equal("0.0.0.0", config.Options.Host);
    }

    [Theory]
    [InlineData("port 70000 is out of range", "-p", "70000")]
    [InlineData("http port -5 is out of range", "-m", "-5")]
    [InlineData("server name cannot contain spaces", "-n", "a b")]
    public void Flag_values_are_validated(string message, params string[] args)
    {
        var config = ServerConfiguration.Load(args);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Contains(message, config.Error);
    }

    [Fact]
    public void Max_payload_above_max_pending_is_refused_as_nats_server()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "max_payload: 2MB\nmax_pending: 1MB\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal("max_payload (2097152) cannot be higher than max_pending (1048576)", config.Error);
    }

    [Fact]
    public void Relative_includes_resolve_from_the_config_file_not_the_working_directory()
    {
        using var dir = new TempConfigDirectory();
        dir.Write("etc/limits.conf", "max_payload: 512kb\n");
        var file = dir.Write("etc/server.conf", "include limits.conf\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Run, config.Action);
        Assert.Equal(512 * 1024, config.Options.MaxPayload);
    }
}
