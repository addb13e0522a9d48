using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Leaf;

/// <summary>
/// Owns one leaf node link's lifetime, as <see cref="ConnectionActor"/> does a client's: starts its
/// pumps, runs the CONNECT timeout of an accepted link, the PING/PONG keepalive, and shuts the link
/// down when it stops. Understands <see cref="ConnectionActor.Protocol"/>'s messages, which the link's
/// data path sends its owner. Never sees a NATS message.
/// </summary>
internal sealed partial class LeafActor : ReceiveActor, IWithTimers
{
    private const string AuthTimerKey = "auth";
    private const string PingTimerKey = "ping";

    private readonly LeafContext _context;
    private readonly LeafLink _link;
    private readonly LeafConnection _connection;
    private string _closeReason = "Server Shutdown";

    public LeafActor(LeafContext context, Socket socket, LeafLink link, Account account, ulong id)
    {
        _context = context;
        _link = link;
        _connection = context.CreateConnection(socket, id, Self, link, account);

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

    public static Props Props(LeafContext context, Socket socket, LeafLink link, Account account, ulong id) =>
        Akka.Actor.Props.Create(() => new LeafActor(context, socket, link, account, id));

    protected override void PreStart()
    {
        _context.Registry.Register(_connection);

        // An accepted link must CONNECT in time; a dialled one must hear the hub's INFO in time (nats-server's
        // DEFAULT_LEAFNODE_INFO_WAIT and connectProcessTimeout): both under the authorization timeout here, the
        // dialled one's lengthened by the remote's TLS handshake timeout when it has TLS.
        var timeout = _link.Solicited
            ? TimeSpan.FromSeconds(2) + (_link.Remote!.Tls?.Timeout ?? TimeSpan.Zero)
            : _context.Options.LeafNodes.AuthTimeout;
        Timers.StartSingleTimer(AuthTimerKey, ConnectionActor.Protocol.AuthTimeout.Instance, timeout);
        if (_context.Options.PingInterval > TimeSpan.Zero)
        {
            Timers.StartPeriodicTimer(PingTimerKey, ConnectionActor.Protocol.PingTick.Instance, _context.Options.PingInterval);
        }

        Log.Created(_context.Logger, _connection.RemoteIp, _connection.RemotePort, _connection.Id, _link.Solicited ? "solicited" : "accepted");
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
        [LoggerMessage(Level = LogLevel.Debug, Message = "{Ip}:{Port} - lid:{Lid} - Leafnode connection started ({How})")]
        public static partial void Created(ILogger logger, string ip, int port, ulong lid, string how);

        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - lid:{Lid} - Leafnode connection closed: {Reason}")]
        public static partial void Closed(ILogger logger, string ip, int port, ulong lid, string reason);
    }
}
