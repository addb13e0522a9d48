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
}
