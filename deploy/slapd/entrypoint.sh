#!/bin/sh
# slapd for Yona's VPN accounts, configured from the environment: LDAP_BASE_DN (dc=…), the administrator
# cn=admin,<base> whose password is read from LDAP_ADMIN_PASSWORD_FILE (stored hashed), the data in
# /var/lib/ldap/data (a volume). On the first start it adds the base entry and the accounts' branch (ou=SSL), as
# Yona's directory had them. Listens on 1389 (no root needed); the root filesystem may be read-only (/tmp a tmpfs).
set -eu
base="${LDAP_BASE_DN:?set LDAP_BASE_DN, for example dc=yona,dc=example}"
case "$base" in dc=*) ;; *) echo "LDAP_BASE_DN must start with dc=" >&2; exit 1 ;; esac
password="$(cat "${LDAP_ADMIN_PASSWORD_FILE:?set LDAP_ADMIN_PASSWORD_FILE to a file holding the password}")"
conf=/tmp/slapd.conf
umask 077
cat >"$conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
pidfile /tmp/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 1073741824
suffix "$base"
rootdn "cn=admin,$base"
rootpw $(slappasswd -n -s "$password")
directory /var/lib/ldap/data
# a password is only ever compared (an account binds with its own); bound accounts read, anonymous may only bind
access to attrs=userPassword by self write by anonymous auth by * none
access to * by users read by anonymous auth
CONF
if [ ! -e /var/lib/ldap/data/data.mdb ]; then
    first="${base%%,*}"
    slapadd -f "$conf" <<LDIF
dn: $base
objectClass: dcObject
objectClass: organization
dc: ${first#dc=}
o: Yona

dn: ou=SSL,$base
objectClass: organizationalUnit
ou: SSL
LDIF
fi
exec slapd -d 0 -f "$conf" -h ldap://0.0.0.0:1389/
