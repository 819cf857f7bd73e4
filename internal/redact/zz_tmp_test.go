package redact

import (
	"fmt"
	"testing"
)

func TestZZTmp(t *testing.T) {
	r := mustNew(t, DefaultSettings())
	for _, s := range []string{
		`aws secretsmanager create-secret --name x --secret-string Hunter2Hunter2x`,
		`{"ARN": "arn:x", "SecretString": "Hunter2Hunter2x"}`,
		`kubectl create secret generic db --from-literal=password=Hunter2Hunter2x --from-literal=user=bob`,
		`kubectl create secret docker-registry r --docker-password=Hunter2Hunter2x`,
		`curl -ualice:Hunter2Hunter2x https://x`,
		`curl --user=alice:Hunter2Hunter2x https://x`,
		`wget --http-password=Hunter2Hunter2x https://x`,
		`wget --password Hunter2Hunter2x https://x`,
		`ya29.a0AfH6SMBx3kQ9vLmN2pR7sT1uW4yZabcdefghijklmnopqrstuv0123456789`,
		`gsk_` + `aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5m`,
		`lsv2_pt_` + `0123456789abcdef0123456789abcdef_0123456789`,
		`token: 1//0gAbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjKlMnOpQrStUvWxYz0123`,
		`"refresh_token": "1//0gAbCdEfGhIjKlMnOpQrStUvWxYz"`,
		`sshpass -p Hunter2Hunter2x ssh u@h`,
		`PGPASSWORD=Hunter2Hunter2x psql -h db`,
		`openssl pkcs12 -export -passout pass:Hunter2Hunter2x -out a.p12`,
		`keytool -importkeystore -storepass Hunter2Hunter2x`,
		`htpasswd -bc .htpasswd admin Hunter2Hunter2x`,
		`mysql --password=Hunter2Hunter2x`,
		`mysql -u root --password Hunter2Hunter2x`,
		`ldapsearch -D cn=admin -w Hunter2Hunter2x`,
		`git -c http.extraHeader="Authorization: Basic YWxpY2U6SHVudGVyMkh1bnRlcjJ4" clone x`,
		`git -c http.extraheader="AUTHORIZATION: bearer Hunter2Hunter2x1" clone x`,
		"export AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEHaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		`aws configure set aws_secret_access_key Hunter2Hunter2x`,
		`{"client_secret":"Hunter2Hunter2x","refresh_token":"abc"}`,
		`client_secret=Hunter2Hunter2x&grant_type=client_credentials`,
		`-----BEGIN ENCRYPTED PRIVATE KEY-----` + "\nMIIabc\n" + `-----END ENCRYPTED PRIVATE KEY-----`,
		`-----BEGIN PGP PRIVATE KEY BLOCK-----` + "\n\nlQOYBGabc\n" + `-----END PGP PRIVATE KEY BLOCK-----`,
		`PuTTY-User-Key-File-3: ssh-rsa` + "\nPrivate-Lines: 14\nAAAAgQCabcdefabcdef\n",
		`SSHPASS=Hunter2Hunter2x sshpass -e ssh h`,
		`DOCKER_AUTH_CONFIG='{"auths":{"r":{"auth":"YWxpY2U6SHVudGVyMkh1bnRlcjJ4"}}}'`,
		`"identitytoken": "Hunter2Hunter2x"`,
		`hf_` + `AbCdEfGhIjKlMnOpQrStUvWxYz01234567`,
		`https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrSt`,
		`https://user:Hunter2Hunter2x@` + "host",
		`redis://default:Hunter2Hunter2x@redis-123.c1.cloud.redislabs.com:12345`,
		`amqps://user:Hunter2Hunter2x@b-1.mq.us-east-1.amazonaws.com:5671`,
		`SECRET_KEY = 'django-insecure-abc123def456ghi789jkl012mno345pqr678'`,
		`app.config['SECRET_KEY'] = 'Hunter2Hunter2x'`,
		`sk-or-v1-` + `0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef`,
		`xai-` + `AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz01234567890abcdef`,
		`tvly-` + `AbCdEfGhIjKlMnOpQrStUvWxYz012345`,
		`r8_` + `AbCdEfGhIjKlMnOpQrStUvWxYz0123456789`,
	} {
		got, _ := r.String(s, nil)
		mark := "   "
		if got == s {
			mark = "!! "
		}
		fmt.Printf("%s%q\n", mark, got)
	}
}
