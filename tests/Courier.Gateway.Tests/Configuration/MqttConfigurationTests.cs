using Courier.Actors.Server;
using Courier.Gateway.Configuration;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

/// <summary>The <c>mqtt { }</c> block, as nats-server's parseMQTT and validateMQTTOptions.</summary>
public sealed class MqttConfigurationTests
{
    private static (ServerOptions Options, IReadOnlyList<string> Warnings) Bind(string text)
    {
        var options = new ServerOptions();
        var warnings = OptionsBinder.Bind(ConfigParser.Parse(text, "test.conf"), options);
        return (options, warnings);
    }

    [Fact]
    public void Without_an_mqtt_block_there_is_no_mqtt_listener() =>
        Assert.Null(Bind("port: 4222").Options.Mqtt);

    [Fact]
    public void Every_mqtt_key_binds_to_its_option()
    {
        var (options, warnings) = Bind("""
            mqtt {
              host: 127.0.0.1
              port: 1884
              no_auth_user: dev
              authorization { username: m, password: p, timeout: 3 }
              ack_wait: "1m"
              max_ack_pending: 100
            }
            """);

        Assert.Empty(warnings);
        var mqtt = Assert.IsType<MqttOptions>(options.Mqtt);
        Assert.Equal("127.0.0.1", mqtt.Host);
        Assert.Equal(1884, mqtt.Port);
        Assert.Equal("dev", mqtt.NoAuthUser);
        Assert.Equal("m", mqtt.Username);
        Assert.Equal("p", mqtt.Password);
        Assert.Equal(TimeSpan.FromSeconds(3), mqtt.AuthTimeout);
        Assert.Equal(TimeSpan.FromMinutes(1), mqtt.AckWait);
        Assert.Equal(100, mqtt.MaxAckPending);
    }

    [Fact]
    public void An_empty_mqtt_block_takes_nats_servers_defaults()
    {
        var mqtt = Assert.IsType<MqttOptions>(Bind("mqtt {}").Options.Mqtt);
        Assert.Equal(1883, mqtt.Port);
        Assert.Equal(TimeSpan.FromSeconds(30), mqtt.AckWait);
        Assert.Equal(1024, mqtt.MaxAckPending);
    }

    [Fact]
    public void A_max_ack_pending_over_65535_is_an_error() =>
        Assert.Throws<ConfigException>(() => Bind("mqtt { max_ack_pending: 70000 }"));

    [Fact]
    public void Mqtt_keys_courier_does_not_implement_are_warned_and_replica_counts_refused()
    {
        var (_, warnings) = Bind("mqtt { port: 1883, js_domain: hub }");
        Assert.Contains("field \"js_domain\" is not supported", Assert.Single(warnings));

        var e = Assert.Throws<ConfigException>(() => Bind("mqtt { port: 1883, stream_replicas: 3 }"));
        Assert.Contains("field \"stream_replicas\" is not implemented by Courier", e.Message);
    }

    [Fact]
    public void Nats_server_2_10s_qos2_and_api_timeout_keys_bind_to_their_options()
    {
        var (options, warnings) = Bind("""
            mqtt {
              reject_qos2_publish: true
              downgrade_qos2_subscribe: true
              js_api_timeout: "10s"
            }
            """);

        Assert.Empty(warnings);
        var mqtt = Assert.IsType<MqttOptions>(options.Mqtt);
        Assert.True(mqtt.RejectQos2Publish);
        Assert.True(mqtt.DowngradeQos2Subscribe);
        Assert.Equal(TimeSpan.FromSeconds(10), mqtt.JsApiTimeout);
        var defaults = Assert.IsType<MqttOptions>(Bind("mqtt {}").Options.Mqtt);
        Assert.Equal((false, false, TimeSpan.FromSeconds(5)), (defaults.RejectQos2Publish, defaults.DowngradeQos2Subscribe, defaults.JsApiTimeout));
        Assert.Throws<ConfigException>(() => Bind("mqtt { js_api_timeout: \"0s\" }"));
    }

    [Theory]
    [InlineData("stream_replicas: 1")]
    [InlineData("consumer_replicas: 0")]
    [InlineData("consumer_replicas: 1")]
    [InlineData("consumer_memory_storage: false")]
    [InlineData("consumer_inactive_threshold: \"0s\"")]
    public void Mqtt_stream_and_consumer_keys_that_say_what_courier_does_are_taken_silently(string key) =>
        Assert.Empty(Bind($"mqtt {{ {key} }}").Warnings);

    [Theory]
    [InlineData("stream_replicas: 3", "stream_replicas")]
    [InlineData("consumer_replicas: 3", "consumer_replicas")]
    [InlineData("consumer_memory_storage: true", "consumer_memory_storage")]
    [InlineData("consumer_inactive_threshold: \"1h\"", "consumer_inactive_threshold")]
    [InlineData("consumer_auto_cleanup: \"1h\"", "consumer_auto_cleanup")]
    public void Mqtt_stream_and_consumer_keys_asking_for_what_courier_does_not_do_stop_the_start(string key, string field)
    {
        var e = Assert.Throws<ConfigException>(() => Bind($"mqtt {{ {key} }}"));
        Assert.Contains($"field \"{field}\" is not implemented by Courier", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Mqtt_without_jetstream_is_refused_with_nats_servers_words()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "mqtt { port: 1883 }\n");

        var config = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, config.Action);
        Assert.Equal("mqtt requires JetStream to be enabled if running in standalone mode", config.Error);
    }

    [Fact]
    public void Mqtt_with_jetstream_is_accepted()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "jetstream: enabled\nmqtt { port: 1883 }\n");

        Assert.Equal(CommandLineAction.Run, ServerConfiguration.Load(["-c", file]).Action);
    }

    [Fact]
    public void An_mqtt_user_name_next_to_server_users_is_refused_as_nats_server_does()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "jetstream: enabled\nauthorization { users = [ { user: a, password: b } ] }\nmqtt { port: 1883, authorization { username: m } }\n");

        Assert.Equal("mqtt authentication username not compatible with presence of users/nkeys", ServerConfiguration.Load(["-c", file]).Error);
    }

    [Fact]
    public void A_users_list_in_mqtt_authorization_is_refused_as_nats_server_2_9_10_does()
    {
        // nats-server 2.9.10 on this file exits 1 with "nats-server: server.conf:4:19: unknown field "users"":
        // its mqtt authorization is parseSimpleAuth (user, password, token, timeout) and nothing else.
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "jetstream: enabled\nmqtt {\n  port: 1883\n  authorization { users: [ {user: a, password: b} ] }\n}\n");

        var loaded = ServerConfiguration.Load(["-c", file]);

        Assert.Equal(CommandLineAction.Error, loaded.Action);
        Assert.Equal($"{file}:4:19: unknown field \"users\"", loaded.Error);
    }

    [Fact]
    public void An_mqtt_no_auth_user_that_is_not_a_server_user_is_refused_as_nats_server_does()
    {
        using var dir = new TempConfigDirectory();
        var file = dir.Write("server.conf", "jetstream: enabled\nmqtt { port: 1883, no_auth_user: ghost }\n");

        Assert.Equal(
            "no_auth_user: \"ghost\" not present as user or nkey in authorization block or account configuration",
            ServerConfiguration.Load(["-c", file]).Error);
    }
}
