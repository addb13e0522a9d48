using System.Buffers;
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
/// A route link: a connection to a peer server speaking nats-server 2.9's route protocol. It is a
/// <see cref="ClientConnection"/> with its own read loop (RouteParser) and the same outbound and write
/// pump, so on the publish path a route is just another subscriber: its RS+ interest sits in the
/// subject space as subscriptions whose client is the link, and a publish that matches appends one
/// RMSG/HMSG frame to its outbound (DESIGN.md §3).
/// </summary>
internal sealed partial class ClientConnection
{
    private readonly RouteLink? _route;
    private readonly RouteParser? _routeParser;

    // Per publish: the routes the message goes to, and for each queue group routed, which route.
    private readonly List<ClientConnection> _routeTargets = [];
    private readonly List<(ClientConnection Route, QueueGroup Group)> _routedGroups = [];

    // A JetStream delivery's reply with its subject appended (per thread; see JetStreamRouteReply).
    [ThreadStatic]
    private static byte[]? _threadJetStreamReply;

    // The RMSG line of one publish (per thread, as the MSG template).
    [ThreadStatic]
    private static byte[]? _threadRouteLine;

    /// <summary>The route state when this connection is a route link; null for clients.</summary>
    public RouteLink? Route => _route;

    /// <summary>A route link to a peer server.</summary>
    public bool IsRoute => _route is not null;

    /// <summary>Sends CONNECT (when this node dialled) and INFO, then starts the pumps: nats-server's createRoute.</summary>
    private void StartRoute()
    {
        var table = _broker.Routes!;
        if (_route!.Solicited)
        {
            var url = _route.Url!;
            string? user = null, pass = null;
            if (url.UserInfo.Length > 0)
            {
                var colon = url.UserInfo.IndexOf(':');
                user = Uri.UnescapeDataString(colon < 0 ? url.UserInfo : url.UserInfo[..colon]);
                pass = colon < 0 ? null : Uri.UnescapeDataString(url.UserInfo[(colon + 1)..]);
            }
            else if (_broker.Options.Cluster.Username is { } clusterUser)
            {
                // A route learned from a peer's INFO: the cluster's own credentials (processImplicitRoute).
                user = clusterUser;
                pass = _broker.Options.Cluster.Password;
            }

            var connect = new RouteConnect
            {
                User = user,
                Pass = pass,
                Name = _broker.ServerId,
                Headers = true,
                Cluster = table.ClusterName,
                Dynamic = table.Dynamic,
                Lnoc = true,
                TlsRequired = _broker.RouteTls is not null,
            };
            Outbound.Write(Encoding.UTF8.GetBytes("CONNECT " + JsonSerializer.Serialize(connect, NatsJsonContext.Default.RouteConnect) + "\r\n"));
        }

        Outbound.Write(_broker.ClusterView.RouteInfoLine());
        if (_broker.RouteTls is { } tls)
        {
            // CONNECT and INFO wait in the outbound: they are the first encrypted frames.
            _readPump = Task.Run(() => SecureRouteAndRunAsync(tls));
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        _readPump = Task.Run(RunReadPumpAsync);
    }

    /// <summary>Processes every complete route command in <paramref name="buffer"/> (the route's counterpart of Process).</summary>
    private ReadOutcome ProcessRoute(ref ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        var command = default(RouteCommand);
        var outcome = ReadOutcome.Continue;
        var route = _route!;
        while (true)
        {
            var before = reader.Consumed;
            var status = _routeParser!.TryRead(ref reader, ref command, out var error);
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
                        outcome = ReadOutcome.FlushSubscriptions;
                        break;
                    }

                    // RMSG <account> ...: into that account's space (the last one is kept: usually the next is the same).
                    if (command.Account.SequenceEqual(_account.NameUtf8) || RouteAccount(command.Account) is not null)
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

                        ProcessPublish(command.Subject, messageSubject, reply, command.HeaderSize, command.Payload, command.Queues);
                    }

                    break;
                case RouteOp.Sub:
                    ProcessRemoteSub(command.Account, command.Subject, command.Queue, command.Weight);
                    break;
                case RouteOp.Unsub:
                    ProcessRemoteUnsub(command.Account, command.Subject, command.Queue);
                    break;
                case RouteOp.Ping:
                    WriteOwn(ProtocolWriter.Pong);
                    break;
                case RouteOp.Pong:
                    Volatile.Write(ref _pingsOut, 0);
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

        Volatile.Write(ref _lastActivityTick, Environment.TickCount64);
        buffer = buffer.Slice(reader.Position);
        return outcome;
    }

    // CONNECT {"echo":true,"verbose":false,"pedantic":false,"user":..,"pass":..,"tls_required":false,"headers":true,"name":"<server id>","cluster":"<name>","lnoc":true}
    private ReadOutcome ProcessRouteConnect(ReadOnlySpan<byte> json)
    {
        RouteConnect connect;
        try
        {
            connect = JsonSerializer.Deserialize(json, NatsJsonContext.Default.RouteConnect) ?? new RouteConnect();
        }
        catch (JsonException)
        {
            return Fatal(null, "Parse Error");
        }

        var route = _route!;
        var cluster = _broker.Options.Cluster;
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

        var table = _broker.Routes!;
        if (!table.AcceptClusterName(connect.Cluster, connect.Dynamic))
        {
            var text = $"Rejecting connection, cluster name \"{connect.Cluster}\" does not match \"{table.ClusterName}\"";
            Log.RouteRejected(_log, Id, text);
            return Fatal(text, "Cluster Name Conflict");
        }

        route.RemoteId = connect.Name;
        route.Headers = connect.Headers;
        route.ConnectReceived = true;
        _owner.Tell(ConnectionActor.Protocol.Connected.Instance);
        return ReadOutcome.Continue;
    }

    // INFO {json}: the peer's first INFO registers the link; later ones update it or tell of another server.
    private ReadOutcome ProcessRouteInfo(ReadOnlySpan<byte> json)
    {
        RouteInfo info;
        try
        {
            info = JsonSerializer.Deserialize(json, NatsJsonContext.Default.RouteInfo) ?? new RouteInfo();
        }
        catch (JsonException)
        {
            return Fatal(null, "Parse Error");
        }

        var route = _route!;
        var table = _broker.Routes!;
        if (info.ServerId == _broker.ServerId)
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
                _broker.ClusterView.OnImplicitRoute(info);
            }
            else if (!info.LameDuckMode)
            {
                info.CourierAkka ??= known.CourierAkka;
                route.RemoteInfo = info;
                _broker.ClusterView.OnRoutesChanged();
            }
            else if (!route.LameDuck)
            {
                // The peer is in lame duck mode: stop advertising its client URLs, tell our clients (nats-server's processRouteInfo).
                route.LameDuck = true;
                _broker.ClusterView.OnRoutesChanged();
            }

            return ReadOutcome.Continue;
        }

        if (!route.Solicited && info.ServerName == _broker.ServerName)
        {
            Log.DuplicateServerName(_log, Id, info.ServerName);
            return Fatal(null, "Duplicate Server Name");
        }

        route.RemoteId = info.ServerId;
        route.Headers = info.Headers;
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

    private static string FormatHost(string ip) => ip.Contains(':') ? $"[{ip}]" : ip;

    /// <summary>Makes the account a route line names this link's current one; null (and unchanged) when this node does not know it.</summary>
    private Account? RouteAccount(ReadOnlySpan<byte> name)
    {
        if (_broker.Accounts.Find(name) is not { } account)
        {
            return null;
        }

        SwitchAccount(account);
        return account;
    }

    // RS+ <account> <subject> [<queue> <weight>]
    private void ProcessRemoteSub(ReadOnlySpan<byte> accountName, ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, int weight)
    {
        if (_broker.Accounts.Find(accountName) is not { } account || !SubjectRules.IsValidSubject(subjectBytes))
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

    /// <summary>Notes a route this publish goes to (once per route), and the queue group it carries for it, if any.</summary>
    private void AddRouteTarget(ClientConnection route, QueueGroup? group)
    {
        if (!_routeTargets.Contains(route))
        {
            _routeTargets.Add(route);
        }

        if (group is not null)
        {
            _routedGroups.Add((route, group));
        }
    }

    /// <summary>
    /// Appends the publish to each route noted: <c>RMSG $G &lt;subject&gt; [reply] &lt;size&gt;</c>, or with
    /// the queue groups the route was chosen for, <c>RMSG $G &lt;subject&gt; + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c>
    /// (<c>|</c> without a reply); HMSG with the header size for a message with headers.
    /// </summary>
    private bool SendToRoutes(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var delivered = false;
        var size = (int)payload.Length;
        foreach (var route in _routeTargets)
        {
            if (headerSize >= 0 && !route._route!.Headers)
            {
                continue; // the peer cannot take headers
            }

            var line = _threadRouteLine ??= new byte[_msgTemplateSize + 256];
            var queuesLength = 0;
            foreach (var (target, group) in _routedGroups)
            {
                if (ReferenceEquals(target, route))
                {
                    queuesLength += group.NameUtf8.Length + 1;
                }
            }

            var needed = subject.Length + replyTo.Length + queuesLength + 64;
            if (line.Length < needed * 2)
            {
                _threadRouteLine = line = new byte[needed * 2];
            }

            // The queue names, separated by spaces, at the end of the buffer; the line goes at its start.
            var queuesAt = line.Length - queuesLength;
            var q = queuesAt;
            foreach (var (target, group) in _routedGroups)
            {
                if (ReferenceEquals(target, route))
                {
                    if (q > queuesAt)
                    {
                        line[q++] = (byte)' ';
                    }

                    group.NameUtf8.CopyTo(line, q);
                    q += group.NameUtf8.Length;
                }
            }

            var n = RouteWriter.WriteMsgLine(line.AsSpan(0, queuesAt), _account.NameUtf8, subject, replyTo, line.AsSpan(queuesAt, q - queuesAt), headerSize, size);
            if (n > 0 && route.Outbound.WriteMsg(line.AsSpan(0, n), default, default, payload))
            {
                Touch(route.Outbound);
                delivered = true;
            }
        }

        _routeTargets.Clear();
        _routedGroups.Clear();
        return delivered;
    }

    /// <summary><c>&lt;reply&gt;@&lt;subject&gt;</c> in a buffer of the thread's: a JetStream delivery's reply on a route.</summary>
    private static ReadOnlySpan<byte> JetStreamRouteReply(ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> messageSubject)
    {
        var length = replyTo.Length + 1 + messageSubject.Length;
        var buffer = _threadJetStreamReply is { } existing && existing.Length >= length ? existing : (_threadJetStreamReply = new byte[length * 2]);
        replyTo.CopyTo(buffer);
        buffer[replyTo.Length] = (byte)'@';
        messageSubject.CopyTo(buffer.AsSpan(replyTo.Length + 1));
        return buffer.AsSpan(0, length);
    }

    /// <summary>Whether an RMSG's queue list names <paramref name="name"/>.</summary>
    private static bool RoutedQueuesContain(ReadOnlySpan<byte> queues, ReadOnlySpan<byte> name)
    {
        while (RouteParser.NextQueue(ref queues, out var queue))
        {
            if (queue.SequenceEqual(name))
            {
                return true;
            }
        }

        return false;
    }

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
