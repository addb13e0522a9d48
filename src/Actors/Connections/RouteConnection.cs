using System.Buffers;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>
/// A route link: a connection to a peer server speaking nats-server 2.9's route protocol (CONNECT/INFO,
/// RS+/RS-, RMSG/HMSG). On the publish path a route is just another subscriber: its RS+ interest sits
/// in the subject space as subscriptions of this connection, and a publish that matches appends one
/// RMSG/HMSG frame to its outbound (<see cref="Publisher"/>, DESIGN.md §3). What it receives it
/// publishes as a peer: to local subscribers only (one hop).
/// </summary>
internal sealed partial class RouteConnection : Connection
{
    private readonly RouteLinkContext _context;
    private readonly RouteParser _parser;
    private string? _lastOrigin;
    private byte[] _lastOriginUtf8 = [];

    public RouteConnection(RouteLinkContext context, Stream stream, Socket socket, ulong id, IActorRef owner, RouteLink link)
        : base(context.Node, new Transport(stream, socket), id, owner, PublisherKind.Peer)
    {
        // No verbose or pedantic mode; messages up to the largest payload nats-server can be configured
        // for (a peer may allow more than we do).
        _context = context;
        var options = context.Node.Options;
        Link = link;
        _parser = new RouteParser(options.MaxControlLine, Math.Max(options.MaxPayload, RouteParser.DefaultMaxPayload));
    }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.Route;

    /// <summary>The route's state: the peer's INFO, whether this node dialled, what the peer supports.</summary>
    public RouteLink Link { get; }

    /// <summary>Sends CONNECT (when this node dialled) and INFO, then starts the pumps: nats-server's createRoute.</summary>
    public override void Start()
    {
        var table = _context.Routes;
        if (Link.Solicited)
        {
            var url = Link.Url!;
            string? user = null, pass = null;
            if (url.UserInfo.Length > 0)
            {
                var colon = url.UserInfo.IndexOf(':');
                user = Uri.UnescapeDataString(colon < 0 ? url.UserInfo : url.UserInfo[..colon]);
                pass = colon < 0 ? null : Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]);
            }
            else if (_context.Node.Options.Cluster.Username is { } clusterUser)
            {
                // A route learned from a peer's INFO: the cluster's own credentials (processImplicitRoute).
                user = clusterUser;
                pass = _context.Node.Options.Cluster.Password;
            }

            var connect = new RouteConnect
            {
                User = user,
                Pass = pass,
                Name = _context.ServerId,
                Headers = true,
                Cluster = table.ClusterName,
                Dynamic = table.Dynamic,
                Lnoc = true,
                TlsRequired = _context.Tls is not null,
            };
            Outbound.Write(Encoding.UTF8.GetBytes("CONNECT " + JsonSerializer.Serialize(connect, NatsJsonContext.Default.RouteConnect) + "\r\n"));
        }

        Outbound.Write(_context.Cluster.RouteInfoLine());
        if (_context.Tls is { } tls)
        {
            // CONNECT and INFO wait in the outbound: they are the first encrypted frames.
            _readPump = Task.Run(() => SecureAndRunAsync(tls));
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        _readPump = Task.Run(RunReadPumpAsync);
    }

    /// <summary>
    /// A route with <c>cluster { tls { } }</c>, as nats-server's createRoute: the handshake before anything
    /// else, as the TLS client when this node dialled (the route URL's host names the peer) and as the
    /// server when it accepted, the peer's certificate verified both ways; then CONNECT/INFO and the
    /// pumps over the encrypted stream. Plain text on the route port fails here, logged as nats-server
    /// logs it (<c>rid:N - TLS route handshake error: ...</c>), and closes this link only.
    /// </summary>
    private async Task SecureAndRunAsync(TlsTransport tls)
    {
        var peer = Link.Solicited ? Link.Url!.Host.Trim('[', ']') : null;
        if (!await TrySecureAsync(tls, "rid", "TLS route handshake error", peer).ConfigureAwait(false))
        {
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>Never called: the publisher sends to routes itself, once per route (<see cref="Publisher"/>).</summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from) =>
        throw new System.Diagnostics.UnreachableException("a route's subscriptions are sent to by the publisher's route targets");

    /// <summary>A route's subscriptions are a peer's interest: never told back to routes.</summary>
    internal override bool TellsRoutes(Subscription sub) => false;

    /// <inheritdoc />
    private protected override void OnClosing() => _context.Routes.Unregister(this);

    /// <inheritdoc />
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(RouteCommand);
        var outcome = ReadOutcome.Continue;
        var route = Link;
        while (true)
        {
            var before = reader.Consumed;
            var status = _parser.TryRead(ref reader, ref command, out var error);
            if (status == ParseStatus.NeedMoreData)
            {
                break;
            }

            if (status == ParseStatus.Error)
            {
                Log.RouteProtocolError(_log, Id, NatsErrors.ToText(error));
                outcome = Fatal(null, "Parse Error");
                break;
            }

            // An accepted route must CONNECT first (nats-server's expectConnect).
            if (!route.Solicited && !route.ConnectReceived && command.Op != RouteOp.Connect)
            {
                outcome = Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
                break;
            }

            switch (command.Op)
            {
                case RouteOp.Msg:
                case RouteOp.HMsg:
                    if (_pendingChanges.Count > 0)
                    {
                        // RS+/RS- before this message are in effect first, as a client's SUB before its PUB:
                        // a request that follows the requester's RS+ finds its reply subject known here.
                        reader.Rewind(reader.Consumed - before);
                        outcome = ReadOutcome.Wait;
                        break;
                    }

                    // RMSG <account> ...: into that account's space (the last one is kept: usually the next is the same).
                    if (command.Account.SequenceEqual(Publisher.Account.NameUtf8) || RouteAccount(command.Account) is not null)
                    {
                        // RMSG <account> <deliver subject> $JS.ACK.<...>@<subject> ...: a JetStream delivery whose
                        // MSG line shows <subject> (nats-server's processMsgResults, jsAckPre remap).
                        var reply = command.ReplyTo;
                        var messageSubject = command.Subject;
                        var at = reply.LastIndexOf((byte)'@');
                        if (at > 0 && at < reply.Length - 1 && reply.StartsWith("$JS.ACK"u8))
                        {
                            messageSubject = reply[(at + 1)..];
                            reply = reply[..at];
                        }

                        Publisher.Origin = OriginOf(command.Origin);
                        Publisher.Publish(command.Subject, messageSubject, reply, command.HeaderSize, command.Payload, command.Queues);
                    }

                    break;
                case RouteOp.Sub:
                    ProcessRemoteSub(command.Account, command.Subject, command.Queue, command.Weight, command.Origin);
                    break;
                case RouteOp.Unsub:
                    ProcessRemoteUnsub(command.Account, command.Subject, command.Queue);
                    break;
                case RouteOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case RouteOp.Pong:
                    ReceivedPong();
                    break;
                case RouteOp.Info:
                    outcome = ProcessRouteInfo(command.Arguments);
                    break;
                case RouteOp.Connect:
                    outcome = ProcessRouteConnect(command.Arguments);
                    break;
                case RouteOp.Err:
                    Log.RouteError(_log, Id, Encoding.UTF8.GetString(command.Arguments));
                    outcome = Fatal(null, "Parse Error");
                    break;
                default:
                    break; // +OK
            }

            if (outcome != ReadOutcome.Continue)
            {
                break;
            }
        }

        MarkActivity();
        buffer = buffer.Slice(reader.Position);
        return outcome;
    }

    // CONNECT {"echo":true,"verbose":false,"pedantic":false,"user":..,"pass":..,"tls_required":false,"headers":true,"name":"<server id>","cluster":"<name>","lnoc":true}
    private ReadOutcome ProcessRouteConnect(ReadOnlySpan<byte> json)
    {
        if (!TryReadJson(json, NatsJsonContext.Default.RouteConnect, out var connect))
        {
            return Fatal(null, "Parse Error");
        }

        var route = Link;
        var cluster = _context.Node.Options.Cluster;
        if (cluster.Username is { } user && (connect.User != user || !Server.Authentication.Secrets.Equal(cluster.Password, connect.Pass)))
        {
            return Fatal(NatsErrors.AuthorizationViolation, "Authentication Failure");
        }

        if (connect.Lang is not null)
        {
            // A client dialled the route port: nats-server's ErrClientConnectedToRoutePort.
            return Fatal("attempted to connect to route port", "Wrong Port");
        }

        if (connect.Gateway is { } gateway)
        {
            return Fatal($"Rejecting connection from gateway \"{gateway}\" on the Route port", "Wrong Gateway");
        }

        var table = _context.Routes;
        if (!table.AcceptClusterName(connect.Cluster, connect.Dynamic))
        {
            var text = $"Rejecting connection, cluster name \"{connect.Cluster}\" does not match \"{table.ClusterName}\"";
            Log.RouteRejected(_log, Id, text);
            return Fatal(text, "Cluster Name Conflict");
        }

        route.RemoteId = connect.Name;
        route.Headers = connect.Headers;
        route.Lnoc = connect.Lnoc;
        route.ConnectReceived = true;
        Owner.Tell(ConnectionActor.Protocol.Connected.Instance);
        return ReadOutcome.Continue;
    }

    // INFO {json}: the peer's first INFO registers the link; later ones update it or tell of another server.
    private ReadOutcome ProcessRouteInfo(ReadOnlySpan<byte> json)
    {
        if (!TryReadJson(json, NatsJsonContext.Default.RouteInfo, out var info))
        {
            return Fatal(null, "Parse Error");
        }

        var route = Link;
        var table = _context.Routes;
        if (info.ServerId == _context.ServerId)
        {
            route.IsSelf = true;
            route.RemoteId = info.ServerId;
            Log.RouteToSelf(_log, route.Url?.ToString() ?? "(accepted)");
            return Fatal(null, "Duplicate Route");
        }

        if (!string.IsNullOrEmpty(info.Cluster) && !table.AcceptClusterName(info.Cluster, info.Dynamic))
        {
            return Fatal(null, "Cluster Name Conflict");
        }

        if (route.RemoteInfo is { } known)
        {
            if (route.RemoteId != info.ServerId)
            {
                // Gossip: a peer tells of a server it just met; dial it unless we know it.
                _context.Cluster.OnImplicitRoute(info);
            }
            else if (!info.LameDuckMode)
            {
                info.CourierAkka ??= known.CourierAkka;
                route.RemoteInfo = info;
                _context.Cluster.OnRoutesChanged();
            }
            else if (!route.LameDuck)
            {
                // The peer is in lame duck mode: stop advertising its client URLs, tell our clients (nats-server's processRouteInfo).
                route.LameDuck = true;
                _context.Cluster.OnRoutesChanged();
            }

            return ReadOutcome.Continue;
        }

        if (!route.Solicited && info.ServerName == _context.ServerName)
        {
            Log.DuplicateServerName(_log, Id, info.ServerName);
            return Fatal(null, "Duplicate Server Name");
        }

        route.RemoteId = info.ServerId;
        route.Headers = info.Headers;
        route.Lnoc = info.Lnoc;
        route.RemoteInfo = info;
        if (!table.TryRegister(this, out var routeCount))
        {
            Log.DuplicateRoute(_log, Id, info.ServerId);
            return Fatal(null, "Duplicate Route");
        }

        Log.RouteRegistered(_log, RemoteIp, RemotePort, Id, info.ServerName, info.ServerId);
        if (routeCount > 1)
        {
            // Tell the other routes about this peer so they dial it (full mesh).
            var forward = info.Clone();
            forward.Nonce = null;
            forward.Ip ??= $"nats-route://{FormatHost(RemoteIp)}:{info.Port}/";
            table.ForwardInfo(forward, this);
        }

        return ReadOutcome.Continue;
    }

    // The origin cluster of an LMSG as a string, made once while it repeats (a leaf cluster's messages keep coming from it).
    private string? OriginOf(ReadOnlySpan<byte> origin)
    {
        if (origin.IsEmpty)
        {
            return null;
        }

        if (_lastOrigin is null || !origin.SequenceEqual(_lastOriginUtf8))
        {
            _lastOriginUtf8 = origin.ToArray();
            _lastOrigin = Encoding.UTF8.GetString(origin);
        }

        return _lastOrigin;
    }

    private static string FormatHost(string ip) => ip.Contains(':') ? $"[{ip}]" : ip;

    /// <summary>Makes the account a route line names this link's current one; null (and unchanged) when this node does not know it.</summary>
    private Account? RouteAccount(ReadOnlySpan<byte> name)
    {
        if (_context.Node.Accounts.Find(name) is not { } account)
        {
            return null;
        }

        Publisher.SwitchAccount(account);
        return account;
    }

    // RS+ <account> <subject> [<queue> <weight>]
    private void ProcessRemoteSub(ReadOnlySpan<byte> accountName, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, int weight, ReadOnlySpan<byte> origin)
    {
        if (_context.Node.Accounts.Find(accountName) is not { } account || !SubjectRules.IsValidSubject(subjectBytes))
        {
            return;
        }

        var key = RemoteKey(accountName, subjectBytes, queueBytes);
        lock (_subsLock)
        {
            if (_subs.TryGetValue(key, out var existing))
            {
                existing.Weight = Math.Max(weight, 1); // a queue group's new size
                return;
            }
        }

        var subject = Encoding.UTF8.GetString(subjectBytes);
        var sub = new Subscription(this, account, subject, queueBytes.IsEmpty ? null : Encoding.UTF8.GetString(queueBytes), Encoding.UTF8.GetBytes(key), account.Space.ShardForSubscription(subjectBytes))
        {
            Weight = queueBytes.IsEmpty ? 1 : Math.Max(weight, 1),
            Origin = origin.IsEmpty ? null : Encoding.UTF8.GetString(origin),
        };
        lock (_subsLock)
        {
            _subs[key] = sub;
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
    }

    // RS- <account> <subject> [<queue>]
    private void ProcessRemoteUnsub(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes)
    {
        var key = RemoteKey(account, subjectBytes, queueBytes);
        Subscription? removed;
        lock (_subsLock)
        {
            if (!_subs.Remove(key, out removed))
            {
                return;
            }
        }

        _pendingChanges.Add(new SubChange(removed, Add: false));
    }

    // A remote subscription's key in the link's map: account, subject and queue (one per account and subject).
    private static string RemoteKey(ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue) =>
        queue.IsEmpty
            ? $"{Encoding.UTF8.GetString(account)} {Encoding.UTF8.GetString(subject)}"
            : $"{Encoding.UTF8.GetString(account)} {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(queue)}";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "rid:{Rid} - Route Error {Error}")]
        public static partial void RouteError(ILogger logger, ulong rid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "rid:{Rid} - Route protocol error: {Error}")]
        public static partial void RouteProtocolError(ILogger logger, ulong rid, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "rid:{Rid} - {Text}")]
        public static partial void RouteRejected(ILogger logger, ulong rid, string text);

        [LoggerMessage(Level = LogLevel.Debug, Message = "Detected route to self, ignoring \"{Url}\"")]
        public static partial void RouteToSelf(ILogger logger, string url);

        [LoggerMessage(Level = LogLevel.Error, Message = "rid:{Rid} - Remote server has a duplicate name: \"{Name}\"")]
        public static partial void DuplicateServerName(ILogger logger, ulong rid, string name);

        [LoggerMessage(Level = LogLevel.Debug, Message = "rid:{Rid} - Detected duplicate remote route \"{RemoteId}\"")]
        public static partial void DuplicateRoute(ILogger logger, ulong rid, string remoteId);

        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - rid:{Rid} - Route connection created to \"{Name}\" ({RemoteId})")]
        public static partial void RouteRegistered(ILogger logger, string ip, int port, ulong rid, string name, string remoteId);
    }
}
