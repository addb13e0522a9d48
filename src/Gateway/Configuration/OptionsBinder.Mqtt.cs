using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>mqtt { }</c>, as nats-server's parseMQTT (server/opts.go).</summary>
internal sealed partial class OptionsBinder
{
    private const int MaxMqttAckPending = 65535; // packet identifiers are 16 bits, as nats-server's mqttMaxAckTotalLimit

    /// <summary>Replica counts of the MQTT streams and consumers (durability) are refused: Courier keeps one copy.</summary>
    private static readonly UnimplementedKeys UnimplementedMqtt = new(
        warned: ["js_domain", "consumer_memory_storage", "consumer_inactive_threshold", "consumer_auto_cleanup", "advertise"],
        refused: ["stream_replicas", "consumer_replicas"]);

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
                default:
                    Unknown(e, UnimplementedMqtt);
                    break;
            }
        }

        _options.Mqtt = mqtt;
    }

}
