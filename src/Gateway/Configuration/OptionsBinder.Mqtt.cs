using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>mqtt { }</c>, as nats-server's parseMQTT (server/opts.go).</summary>
internal sealed partial class OptionsBinder
{
    private const int MaxMqttAckPending = 65535; // packet identifiers are 16 bits, as nats-server's mqttMaxAckTotalLimit

    /// <summary>What is left unimplemented: a JetStream domain and an advertised address for MQTT, warned.</summary>
    private static readonly UnimplementedKeys UnimplementedMqtt = new(
        warned: ["js_domain", "advertise"],
        refused: []);

    private void BindMqtt(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"expected a block for \"mqtt\", got {Describe(entry.Value)}");
            return;
        }

        var mqtt = _options.Mqtt ?? new MqttOptions();
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "listen":
                    if (TryHostPort(e, out var host, out var port))
                    {
                        mqtt.Host = host ?? mqtt.Host;
                        mqtt.Port = port;
                    }

                    break;
                case "port":
                    if (TryPort(e, out port))
                    {
                        mqtt.Port = port;
                    }

                    break;
                case "host" or "net":
                    if (TryString(e, out var s))
                    {
                        mqtt.Host = s;
                    }

                    break;
                case "tls":
                    mqtt.Tls = LoadTls(e);
                    break;
                case "no_auth_user":
                    if (TryString(e, out s))
                    {
                        mqtt.NoAuthUser = s;
                    }

                    break;
                case "authorization" or "authentication":
                    // nats-server 2.9.10's parseSimpleAuth knows no "users" (nor any other key) here and
                    // refuses to start with 'unknown field "users"': so does Courier, whatever the issue hoped.
                    if (BindSimpleAuthorization(e, other =>
                        {
                            if (!other.IsUsedAsVariable)
                            {
                                Error(other, $"unknown field \"{other.Key}\"");
                            }
                        }) is { } mqttAuth)
                    {
                        (mqtt.Username, mqtt.Password, mqtt.Token) = (mqttAuth.Username ?? mqtt.Username, mqttAuth.Password ?? mqtt.Password, mqttAuth.Token ?? mqtt.Token);
                        mqtt.AuthTimeout = mqttAuth.Timeout ?? mqtt.AuthTimeout; // seconds, as the server's authorization timeout
                    }

                    break;
                case "ack_wait" or "ackwait":
                    if (TryDuration(e, out var wait))
                    {
                        mqtt.AckWait = wait;
                    }

                    break;
                case "max_ack_pending" or "max_pending" or "max_inflight":
                    if (TryInt(e, out var max))
                    {
                        if (max is < 0 or > MaxMqttAckPending)
                        {
                            Error(e, $"invalid value {max}, should be in [0..{MaxMqttAckPending}] range");
                        }
                        else
                        {
                            mqtt.MaxAckPending = max;
                        }
                    }

                    break;
                case "reject_qos2_publish":
                    // nats-server 2.10: a QoS 2 PUBLISH closes the client ("QoS=2 is disabled for PUBLISH messages").
                    if (TryBool(e, out var reject))
                    {
                        mqtt.RejectQos2Publish = reject;
                    }

                    break;
                case "downgrade_qos2_subscribe":
                    // nats-server 2.10: a QoS 2 subscription is granted QoS 1.
                    if (TryBool(e, out var downgrade))
                    {
                        mqtt.DowngradeQos2Subscribe = downgrade;
                    }

                    break;
                case "js_api_timeout" or "api_timeout":
                    // nats-server bounds its MQTT requests to JetStream with it; Courier its requests to the session
                    // registry and journal (a CONNECT, a journaled acknowledgement) that stand where those are.
                    if (TryDuration(e, out var apiTimeout))
                    {
                        if (apiTimeout <= TimeSpan.Zero)
                        {
                            Error(e, "js_api_timeout must be a positive duration");
                        }
                        else
                        {
                            mqtt.JsApiTimeout = apiTimeout;
                        }
                    }

                    break;
                case "stream_replicas" or "consumer_replicas":
                    // MQTT state has one copy, in this node's journal: 1 (and a consumer's 0, "as the stream") is what
                    // Courier does; more copies would be a durability promise it does not keep, so they stop the start.
                    if (TryInt(e, out var replicas) && replicas > 1)
                    {
                        Error(e, UnimplementedKeys.RefusedReason(e.Key));
                    }

                    break;
                case "consumer_memory_storage":
                    // false is nats-server's default and what Courier does (sessions journaled on disk); true asks for
                    // state that a restart loses, which Courier does not offer.
                    if (TryBool(e, out var memory) && memory)
                    {
                        Error(e, UnimplementedKeys.RefusedReason(e.Key));
                    }

                    break;
                case "consumer_inactive_threshold" or "consumer_auto_cleanup":
                    // nats-server deletes the JetStream consumer of an offline session's subscription after this long;
                    // Courier's sessions have no such consumer to delete: 0 (none, the default) only.
                    if (TryDuration(e, out var threshold) && threshold > TimeSpan.Zero)
                    {
                        Error(e, UnimplementedKeys.RefusedReason(e.Key));
                    }

                    break;
                default:
                    Unknown(e, UnimplementedMqtt);
                    break;
            }
        }

        _options.Mqtt = mqtt;
    }

}
