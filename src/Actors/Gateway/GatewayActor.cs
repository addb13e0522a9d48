using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Gateway;

/// <summary>
/// Owns one gateway link's lifetime, as <see cref="ConnectionActor"/> does a client's: starts its pumps,
/// runs the CONNECT timeout of an inbound link (the remote's INFO for an outbound one), the PING/PONG
/// keepalive, and shuts the link down when it stops. Never sees a NATS message.
/// </summary>
internal sealed partial class GatewayActor : ReceiveActor, IWithTimers
{
    private const string AuthTimerKey = "auth";
    private const string PingTimerKey = "ping";

    private readonly GatewayContext _context;
    private readonly GatewayLink _link;
    private readonly GatewayConnection _connection;
    private string _closeReason = "Server Shutdown";

    public GatewayActor(GatewayContext context, Socket socket, GatewayLink link, ulong id)
    {
        _context = context;
        _link = link;
        _connection = context.CreateConnection(socket, id, Self, link);

        Receive<ConnectionActor.Protocol.Connected>(_ => Timers.Cancel(AuthTimerKey));
        Receive<ConnectionActor.Protocol.AuthTimeout>(_ =>
        {
            if (!_link.ConnectReceived && !_link.Registered)
            {
                _connection.SendError(NatsErrors.AuthenticationTimeout);
                StopWith("Authentication Timeout");
            }
        });
        Receive<ConnectionActor.Protocol.PingTick>(_ =>
        {
            if (_connection.PingsOut + 1 > _context.Options.MaxPingsOut)
            {
                _connection.SendError(NatsErrors.StaleConnection);
                StopWith("Stale Connection");
                return;
            }

            _connection.SendPing();
        });
        Receive<ConnectionActor.Protocol.Close>(close => StopWith(close.Reason));
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(GatewayContext context, Socket socket, GatewayLink link, ulong id) =>
        Akka.Actor.Props.Create(() => new GatewayActor(context, socket, link, id));

    protected override void PreStart()
    {
        _context.Registry.Register(_connection);

        // An inbound link must CONNECT within the authorization timeout; an outbound one must hear the remote's INFO
        // in time, after the TLS handshake (its own timeout) when the gateway block has TLS.
        var timeout = _link.Outbound
            ? TimeSpan.FromSeconds(2) + ((_link.Remote?.Tls ?? _context.Options.Gateway.Tls)?.Timeout ?? TimeSpan.Zero)
            : _context.Options.Gateway.AuthTimeout;
        Timers.StartSingleTimer(AuthTimerKey, ConnectionActor.Protocol.AuthTimeout.Instance, timeout);
        if (_context.Options.PingInterval > TimeSpan.Zero)
        {
            Timers.StartPeriodicTimer(PingTimerKey, ConnectionActor.Protocol.PingTick.Instance, _context.Options.PingInterval);
        }

        Log.Created(_context.Logger, _connection.RemoteIp, _connection.RemotePort, _connection.Id, _link.Outbound ? "outbound" : "inbound");
        _connection.Start();
    }

    protected override void PostStop()
    {
        _connection.Shutdown(_closeReason);
        Log.Closed(_context.Logger, _connection.RemoteIp, _connection.RemotePort, _connection.Id, _connection.CloseReason ?? _closeReason);
    }

    private void StopWith(string reason)
    {
        _closeReason = reason;
        Context.Stop(Self);
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Debug, Message = "{Ip}:{Port} - gid:{Gid} - Gateway connection started ({How})")]
        public static partial void Created(ILogger logger, string ip, int port, ulong gid, string how);

        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - gid:{Gid} - Gateway connection closed: {Reason}")]
        public static partial void Closed(ILogger logger, string ip, int port, ulong gid, string reason);
    }
}
