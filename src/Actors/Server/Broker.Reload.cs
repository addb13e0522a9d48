using Courier.Actors.Connections;

namespace Courier.Actors.Server;

/// <summary>A config reload's part in the broker: the authorization options.</summary>
public sealed partial class Broker
{
    /// <summary>
    /// Replaces the user, password, token, users and default permissions with <paramref name="next"/>'s
    /// (the INFO's <c>auth_required</c> follows), then re-checks every connected client: the ones no
    /// longer authorized are closed, the others get their new permissions.
    /// </summary>
    public void ReloadAuthorization(ServerOptions next)
    {
        ArgumentNullException.ThrowIfNull(next);
        Authentication.Reload(next); // logins check the new snapshot from here on

        // The options as monitoring and INFO show them (logins never read these lists).
        Options.Username = next.Username;
        Options.Password = next.Password;
        Options.Token = next.Token;
        Options.DefaultPermissions = next.DefaultPermissions;
        Options.Users.Clear();
        Options.Users.AddRange(next.Users);
        Options.NkeyUsers.Clear();
        Options.NkeyUsers.AddRange(next.NkeyUsers);
        Options.NoAuthUser = next.NoAuthUser;
        Info.SetAuthRequired(Authentication.AuthRequired && next.NoAuthUser is null);

        foreach (var client in Clients)
        {
            (client as Connections.ClientConnection)?.ReapplyAuthorization();
            (client as Connections.MqttConnection)?.ReapplyAuthorization(); // MQTT clients too, as nats-server
        }
    }

    /// <summary>
    /// The limits nats-server 2.9.10 reloads (reload.go): max_payload (INFO and every connected NATS client's
    /// parser), max_control_line (every client's parser), max_connections (clients past the new limit are closed
    /// with <c>-ERR 'maximum connections exceeded'</c>), ping_interval and ping_max, write_deadline and the
    /// authorization timeout (read where they apply: new connections' timers, the write sweep, the ping check).
    /// Returns how many clients were closed for max_connections.
    /// </summary>
    public int ReloadLimits(ServerOptions next)
    {
        ArgumentNullException.ThrowIfNull(next);
        Options.MaxPayload = next.MaxPayload;
        Options.MaxControlLine = next.MaxControlLine;
        Options.MaxConnections = next.MaxConnections;
        Options.PingInterval = next.PingInterval;
        Options.MaxPingsOut = next.MaxPingsOut;
        Options.WriteDeadline = next.WriteDeadline;
        Options.AuthTimeout = next.AuthTimeout;
        Info.SetMaxPayload(next.MaxPayload);

        var clients = new List<Connections.Connection>();
        foreach (var client in Clients)
        {
            if (client.IsClosed || client.IsServerLink || client.IsInternal)
            {
                continue;
            }

            (client as Connections.ClientConnection)?.ApplyLimits(next.MaxPayload, next.MaxControlLine);
            clients.Add(client);
        }

        // As nats-server: as many as are over the limit go, whichever they are.
        var closing = next.MaxConnections > 0 ? clients.Count - next.MaxConnections : 0;
        for (var i = 0; i < closing; i++)
        {
            clients[i].SendError(Protocols.Nats.NatsErrors.MaxConnectionsExceeded);
            clients[i].RequestClose("Maximum Connections Exceeded");
        }

        return Math.Max(closing, 0);
    }

    /// <summary>
    /// A reload's client <c>tls { }</c> block, loaded again (certificates, CAs, verify, timeout, cipher suites): new
    /// connections handshake with it, as nats-server's tlsOption; the ones already secured keep their session.
    /// Turning TLS on or off is refused before this (ServerHost.Reload).
    /// </summary>
    public void ReloadTls(TlsOptions next)
    {
        ArgumentNullException.ThrowIfNull(next);
        var transport = new TlsTransport(next);
        Options.Tls = next;
        Tls = transport;
        NatsClients = NatsClients with { Tls = transport };
        Info.SetTlsVerify(next.Verify);
    }
}
