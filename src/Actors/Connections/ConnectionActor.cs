using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Server;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// Owns one client connection's lifetime: starts its pumps, runs the auth timeout and the
/// PING/PONG keepalive, and shuts the connection down when it stops, whatever stopped it (the
/// client, a protocol error, a slow consumer, or its supervisor). It never sees a NATS message.
/// </summary>
internal sealed class ConnectionActor : UntypedActor, IWithTimers
{
    private const string AuthTimerKey = "auth";
    private const string PingTimerKey = "ping";
    private const string ExpiryTimerKey = "expiry";

    private readonly ServerOptions _options;
    private readonly ClientRegistry _registry;
    private readonly ClientConnection _connection;
    private string _closeReason = "Server Shutdown";

    public ConnectionActor(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket? socket, Stream stream, ulong id)
    {
        _options = options;
        _registry = registry;
        _connection = factory.Create(stream, socket, id, Self);
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <remarks>
    /// Built with a producer rather than <c>Props.Create(() =&gt; ...)</c>: one actor per connection, and a
    /// connection storm opens thousands a second, so no expression tree is built or reflected over per
    /// connection.
    /// </remarks>
    public static Props Props(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket? socket, Stream stream, ulong id) =>
        Akka.Actor.Props.CreateBy(new Producer(factory, registry, options, socket, stream, id));

    protected override void PreStart()
    {
        _registry.Register(_connection);
        var webSocket = _connection.IsWebSocket ? _options.WebSocket : null;
        if (_options.AuthRequired || webSocket is { AuthOverride: true })
        {
            Timers.StartSingleTimer(AuthTimerKey, Protocol.AuthTimeout.Instance, webSocket?.AuthTimeout ?? _options.AuthTimeout);
        }

        if (_options.PingInterval > TimeSpan.Zero)
        {
            Timers.StartPeriodicTimer(PingTimerKey, Protocol.PingTick.Instance, _options.PingInterval);
        }

        _connection.Start();
    }

    protected override void PostStop() => _connection.Shutdown(_closeReason);

    /// <remarks>
    /// An <see cref="UntypedActor"/> with one switch rather than a <see cref="ReceiveActor"/>: a
    /// ReceiveActor builds its handler table per instance (delegates, lists, a matcher), which is
    /// memory per idle connection and work per accepted connection.
    /// </remarks>
    protected override void OnReceive(object message)
    {
        switch (message)
        {
            case Protocol.Connected:
                Timers.Cancel(AuthTimerKey);
                if (_connection.AuthExpires is { } expires)
                {
                    // A user JWT's exp: the connection ends when the JWT does (nats-server's setExpiration).
                    var left = expires - DateTimeOffset.UtcNow;
                    Timers.StartSingleTimer(ExpiryTimerKey, Protocol.AuthExpired.Instance, left > TimeSpan.Zero ? left : TimeSpan.Zero);
                }

                break;
            case Protocol.AuthExpired:
                _connection.SendError(NatsErrors.UserAuthenticationExpired);
                StopWith("Authentication Expired");
                break;
            case Protocol.AuthTimeout:
                if (_connection.ConnectOptions is null)
                {
                    _connection.SendError(NatsErrors.AuthenticationTimeout);
                    StopWith("Authentication Timeout");
                }

                break;
            case Protocol.PingTick:
                if (_connection.PingsOut + 1 > _options.MaxPingsOut)
                {
                    _connection.SendError(NatsErrors.StaleConnection);
                    StopWith("Stale Connection");
                    break;
                }

                _connection.SendPing();
                break;
            case Protocol.Close close:
                StopWith(close.Reason);
                break;
            default:
                Unhandled(message);
                break;
        }
    }

    private void StopWith(string reason)
    {
        _closeReason = reason;
        Context.Stop(Self);
    }

    private sealed class Producer(IConnectionFactory factory, ClientRegistry registry, ServerOptions options, Socket? socket, Stream stream, ulong id)
        : IIndirectActorProducer
    {
        public Type ActorType => typeof(ConnectionActor);

        public ActorBase Produce() => new ConnectionActor(factory, registry, options, socket, stream, id);

        public void Release(ActorBase actor)
        {
        }
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>CONNECT was accepted: the auth timer stops.</summary>
        public sealed class Connected
        {
            public static readonly Connected Instance = new();

            private Connected()
            {
            }

            public override string ToString() => "Connected";
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

        /// <summary>The client's user JWT has expired.</summary>
        public sealed class AuthExpired
        {
            public static readonly AuthExpired Instance = new();

            private AuthExpired()
            {
            }

            public override string ToString() => "AuthExpired";
        }

        /// <summary>Time to PING the client (or declare it stale).</summary>
        public sealed class PingTick
        {
            public static readonly PingTick Instance = new();

            private PingTick()
            {
            }

            public override string ToString() => "PingTick";
        }

        /// <summary>Close the connection.</summary>
        public sealed class Close
        {
            public Close(string reason)
            {
                ArgumentException.ThrowIfNullOrEmpty(reason);
                Reason = reason;
            }

            public string Reason { get; }

            public override string ToString() => $"Close({Reason})";
        }
    }
}
