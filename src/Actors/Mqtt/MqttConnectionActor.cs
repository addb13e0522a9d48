using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Mqtt;

/// <summary>
/// Owns one MQTT client connection's lifetime: starts its pumps, closes it if no CONNECT arrives
/// within the auth timeout, enforces the keep-alive (no packet for 1.5 times the interval the client
/// asked for closes it [MQTT-3.1.2-24]), and shuts the connection down when it stops, whatever
/// stopped it (the client, a protocol error, a takeover, a slow consumer, its supervisor). It never
/// sees an MQTT message.
/// </summary>
internal sealed class MqttConnectionActor : ReceiveActor, IWithTimers
{
    private const string AuthTimerKey = "auth";
    private const string KeepAliveTimerKey = "keepalive";
    private const string RedeliveryTimerKey = "redelivery";
    private const string AuthExpiryTimerKey = "auth-expiry";

    // Bounds for how often the keep-alive is checked: a fraction of the allowed silence, so a
    // dead client is closed soon after 1.5 x keep-alive and idle connections cost few timer ticks.
    private static readonly TimeSpan MinKeepAliveCheck = TimeSpan.FromMilliseconds(100);
    private static readonly TimeSpan MaxKeepAliveCheck = TimeSpan.FromSeconds(5);

    private readonly ServerOptions _options;
    private readonly ClientRegistry _registry;
    private readonly MqttConnection _connection;
    private readonly TimeSpan _ackWait;
    private TimeSpan _allowedSilence;
    private string _closeReason = "Server Shutdown";

    public MqttConnectionActor(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket socket, Stream stream, ulong id)
    {
        _options = options;
        _registry = registry;
        _connection = factory.CreateMqtt(stream, socket, id, Self);
        _ackWait = options.Mqtt?.AckWait ?? TimeSpan.FromSeconds(30);

        Receive<Protocol.Connected>(connected =>
        {
            Timers.Cancel(AuthTimerKey);
            if (_connection.AuthExpires is { } expires)
            {
                // A user JWT's exp: the client is closed when the JWT ends, as nats-server's setExpiration.
                var left = expires - DateTimeOffset.UtcNow;
                Timers.StartSingleTimer(AuthExpiryTimerKey, Protocol.AuthExpired.Instance, left > TimeSpan.Zero ? left : TimeSpan.Zero);
            }

            if (connected.KeepAlive > TimeSpan.Zero)
            {
                _allowedSilence = connected.KeepAlive * 1.5; // [MQTT-3.1.2-24]
                var check = TimeSpan.FromTicks(Math.Clamp(_allowedSilence.Ticks / 4, MinKeepAliveCheck.Ticks, MaxKeepAliveCheck.Ticks));
                Timers.StartPeriodicTimer(KeepAliveTimerKey, Protocol.KeepAliveTick.Instance, check);
            }

            // QoS 1 redelivery: checked a few times per ack_wait, so a delivery goes again soon after it expires.
            var redelivery = TimeSpan.FromTicks(Math.Clamp(_ackWait.Ticks / 4, MinKeepAliveCheck.Ticks, MaxKeepAliveCheck.Ticks));
            Timers.StartPeriodicTimer(RedeliveryTimerKey, Protocol.RedeliveryTick.Instance, redelivery);
        });
        Receive<Protocol.RedeliveryTick>(_ => _connection.RedeliverMqtt(_ackWait));
        Receive<Protocol.AuthExpired>(_ =>
        {
            _connection.WriteServerDisconnect(MqttReasonCode.NotAuthorized);
            StopWith("Authentication Expired");
        });
        Receive<Protocol.AuthTimeout>(_ =>
        {
            if (!_connection.MqttConnected)
            {
                StopWith("Authentication Timeout");
            }
        });
        Receive<Protocol.KeepAliveTick>(_ =>
        {
            if (DateTime.UtcNow - _connection.LastActivity > _allowedSilence)
            {
                _connection.WriteServerDisconnect(MqttReasonCode.KeepAliveTimeout);
                StopWith("Keep-Alive Timeout");
            }
        });
        Receive<ConnectionActor.Protocol.Close>(close =>
        {
            if (close.Reason == MqttSessionActor.DuplicateClientId)
            {
                _connection.WriteServerDisconnect(MqttReasonCode.SessionTakenOver);
            }

            StopWith(close.Reason);
        });
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <remarks>Built with a producer, as <see cref="ConnectionActor"/>: no expression tree per connection.</remarks>
    public static Props Props(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket socket, Stream stream, ulong id) =>
        Akka.Actor.Props.CreateBy(new Producer(factory, registry, options, socket, stream, id));

    protected override void PreStart()
    {
        _registry.Register(_connection);
        var timeout = _options.Mqtt?.AuthTimeout ?? _options.AuthTimeout;
        Timers.StartSingleTimer(AuthTimerKey, Protocol.AuthTimeout.Instance, timeout);
        _connection.Start();
    }

    protected override void PostStop() => _connection.Shutdown(_closeReason);

    private void StopWith(string reason)
    {
        _closeReason = reason;
        Context.Stop(Self);
    }

    private sealed class Producer(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket socket, Stream stream, ulong id)
        : IIndirectActorProducer
    {
        public Type ActorType => typeof(MqttConnectionActor);

        public ActorBase Produce() => new MqttConnectionActor(factory, registry, options, socket, stream, id);

        public void Release(ActorBase actor)
        {
        }
    }

    /// <summary>The messages this actor understands (and <see cref="ConnectionActor.Protocol.Close"/>).</summary>
    public static class Protocol
    {
        /// <summary>CONNECT was accepted: the auth timer stops and the keep-alive starts.</summary>
        public sealed class Connected
        {
            public Connected(TimeSpan keepAlive) => KeepAlive = keepAlive;

            /// <summary>The client's keep-alive interval; zero turns the check off.</summary>
            public TimeSpan KeepAlive { get; }

            public override string ToString() => $"Connected(keepalive={KeepAlive})";
        }

        /// <summary>The client did not CONNECT in time.</summary>
        public sealed class AuthTimeout
        {
            public static readonly AuthTimeout Instance = new();

            private AuthTimeout()
            {
            }

            public override string ToString() => "AuthTimeout";
        }

        /// <summary>Time to send again the QoS 1 deliveries unacknowledged for ack_wait.</summary>
        public sealed class RedeliveryTick
        {
            public static readonly RedeliveryTick Instance = new();

            private RedeliveryTick()
            {
            }

            public override string ToString() => "RedeliveryTick";
        }

        /// <summary>The user JWT the client logged in with has expired.</summary>
        public sealed class AuthExpired
        {
            public static readonly AuthExpired Instance = new();

            private AuthExpired()
            {
            }

            public override string ToString() => "AuthExpired";
        }

        /// <summary>Time to check the keep-alive.</summary>
        public sealed class KeepAliveTick
        {
            public static readonly KeepAliveTick Instance = new();

            private KeepAliveTick()
            {
            }

            public override string ToString() => "KeepAliveTick";
        }
    }
}
